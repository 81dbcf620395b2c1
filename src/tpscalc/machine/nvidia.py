"""NVIDIA GPUs through NVML (the `nvidia-ml-py` package): name, memory, PCIe link."""
from __future__ import annotations

from typing import Any, Protocol

from tpscalc.machine.types import GIB, DetectedGpu


class Nvml(Protocol):
    """The NVML calls the detector makes (pynvml's names, without the `nvml` prefix)."""

    def device_count(self) -> int: ...

    def name(self, index: int) -> str: ...

    def memory_bytes(self, index: int) -> tuple[int, int]:
        """(total, free) bytes."""
        ...

    def pcie(self, index: int) -> tuple[int, int] | None:
        """(generation, lanes) of the current link, None when NVML does not say."""
        ...


class PyNvml:
    """The real NVML through pynvml; `open()` returns None where there is no driver."""

    def __init__(self, module: Any) -> None:
        self.nv = module

    @classmethod
    def open(cls) -> PyNvml | None:
        try:
            import pynvml  # type: ignore[import-untyped]
        except ImportError:
            return None
        try:
            pynvml.nvmlInit()
        except pynvml.NVMLError:  # no libnvidia-ml or no driver: no NVIDIA GPU here
            return None
        return cls(pynvml)

    def _handle(self, index: int) -> Any:
        return self.nv.nvmlDeviceGetHandleByIndex(index)

    def device_count(self) -> int:
        return int(self.nv.nvmlDeviceGetCount())

    def name(self, index: int) -> str:
        name = self.nv.nvmlDeviceGetName(self._handle(index))
        return name.decode() if isinstance(name, bytes) else str(name)

    def memory_bytes(self, index: int) -> tuple[int, int]:
        info = self.nv.nvmlDeviceGetMemoryInfo(self._handle(index))
        return int(info.total), int(info.free)

    def pcie(self, index: int) -> tuple[int, int] | None:
        try:
            h = self._handle(index)
            return (int(self.nv.nvmlDeviceGetCurrPcieLinkGeneration(h)),
                    int(self.nv.nvmlDeviceGetCurrPcieLinkWidth(h)))
        except self.nv.NVMLError:  # SXM boards and some drivers answer "not supported"
            return None


def detect_nvidia(nvml: Nvml | None) -> list[DetectedGpu]:
    """Every NVIDIA GPU NVML reports (none when `nvml` is None)."""
    if nvml is None:
        return []
    out = []
    for i in range(nvml.device_count()):
        total, free = nvml.memory_bytes(i)
        link = nvml.pcie(i)
        out.append(DetectedGpu(
            name=nvml.name(i), vendor="NVIDIA", memory_gib=total / GIB, free_gib=free / GIB,
            backend="cuda", pcie=f"PCIe {link[0]}.0 x{link[1]}" if link else None))
    return out
