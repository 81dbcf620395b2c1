"""What the detectors report, in GiB (2^30 B) and GB/s (10^9 B/s)."""
from __future__ import annotations

from dataclasses import dataclass

GIB = 2**30


@dataclass(frozen=True)
class DetectedGpu:
    """One GPU as its driver names it, with its memory (GiB) when known.

    backend: the llama.cpp backend it would run ("cuda", "rocm", "sycl", "metal").
    pcie: the PCIe link ("PCIe 4.0 x16"), None when unknown or built in.
    gpu_cores: Apple's GPU core count (it tells an M2 Max 30-core from a 38-core).
    usable_fraction: the share of unified memory the GPU may wire (Apple), else None.
    """

    name: str
    vendor: str
    memory_gib: float | None
    free_gib: float | None
    backend: str
    pcie: str | None = None
    gpu_cores: int | None = None
    usable_fraction: float | None = None


@dataclass(frozen=True)
class SystemInfo:
    """System RAM (GiB), its bandwidth (GB/s, None when unknown), the CPU and the OS."""

    ram_gib: float
    ram_available_gib: float
    ram_bandwidth_gb_s: float | None
    cpu: str
    cpu_cores: int | None
    os: str
