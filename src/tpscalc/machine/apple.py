"""Apple Silicon: chip and GPU cores from `system_profiler SPDisplaysDataType`, memory from
`sysctl hw.memsize`, and the GPU's working-set limit from `sysctl iogpu.wired_limit_mb`.

When iogpu.wired_limit_mb is 0 (unset), macOS lets the GPU wire its default share, which the
catalog's Apple cards already carry (gpu_memory_fraction); so None is reported then.
"""
from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Sequence

from tpscalc.machine.types import GIB, DetectedGpu

Run = Callable[[Sequence[str]], str | None]  # a command's stdout, None when it cannot run


def run_command(argv: Sequence[str]) -> str | None:
    """Run `argv` (no shell) and return its stdout, None when it is missing or fails."""
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _int(text: str | None) -> int | None:
    text = (text or "").strip()
    return int(text) if text.isdigit() else None


def detect_apple(run: Run) -> list[DetectedGpu]:
    """The Apple GPU of this Mac, or none (on any other machine the commands do not exist)."""
    profile = run(["system_profiler", "SPDisplaysDataType"])
    if not profile:
        return []
    chip = re.search(r"Chipset Model:\s*(Apple [^\n]+)", profile)
    if not chip:
        return []
    cores = re.search(r"Total Number of Cores:\s*(\d+)", profile)
    memsize = _int(run(["sysctl", "-n", "hw.memsize"]))
    wired_mb = _int(run(["sysctl", "-n", "iogpu.wired_limit_mb"]))
    memory_gib = memsize / GIB if memsize else None
    fraction = None
    if wired_mb and memory_gib:
        fraction = min(1.0, wired_mb / 1024 / memory_gib)
    return [DetectedGpu(name=chip.group(1).strip(), vendor="Apple", memory_gib=memory_gib,
                        free_gib=None, backend="metal",
                        gpu_cores=int(cores.group(1)) if cores else None,
                        usable_fraction=fraction)]
