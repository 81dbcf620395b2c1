"""System RAM and CPU (psutil, /proc/cpuinfo, sysctl) and RAM bandwidth from DMI when readable.

RAM bandwidth = configured speed (MT/s) × 8 bytes × populated memory devices, from
`dmidecode -t memory` (root only on most systems). Counting each populated DIMM as a channel
over-counts boards with two DIMMs per channel; unknown bandwidth is reported as None and the
caller states the default it uses.
"""
from __future__ import annotations

import platform
import re
from pathlib import Path
from typing import Any

from tpscalc.machine.apple import Run
from tpscalc.machine.types import GIB, SystemInfo

BYTES_PER_TRANSFER = 8  # one 64-bit DDR channel


def dmi_bandwidth_gb_s(dmidecode: str | None) -> float | None:
    """Peak RAM bandwidth (GB/s) from `dmidecode -t memory` output, None when not readable."""
    if not dmidecode:
        return None
    speeds = []
    for block in dmidecode.split("\n\n"):
        if "Memory Device" not in block or re.search(r"Size:\s*No Module", block):
            continue
        m = (re.search(r"Configured (?:Memory|Clock) Speed:\s*(\d+)\s*MT/s", block)
             or re.search(r"\n\s*Speed:\s*(\d+)\s*MT/s", block))
        if m:
            speeds.append(int(m.group(1)))
    if not speeds:
        return None
    return sum(s * BYTES_PER_TRANSFER for s in speeds) / 1000


def cpu_name(run: Run, cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The CPU's model name ("AMD EPYC 9654"), else what `platform` says."""
    try:
        m = re.search(r"^model name\s*:\s*(.+)$", cpuinfo.read_text(errors="replace"), re.MULTILINE)
        if m:
            return m.group(1).strip()
    except OSError:
        pass
    if platform.system() == "Darwin":
        brand = run(["sysctl", "-n", "machdep.cpu.brand_string"])
        if brand:
            return brand.strip()
    return platform.processor() or platform.machine() or "unknown"


def detect_system(run: Run, psutil_module: Any | None = None) -> SystemInfo:
    """RAM, CPU and OS of this machine (psutil_module: psutil, or a recorded stand-in)."""
    ps: Any = psutil_module
    if ps is None:
        import psutil  # type: ignore[import-untyped]

        ps = psutil
    vm = ps.virtual_memory()
    return SystemInfo(
        ram_gib=vm.total / GIB, ram_available_gib=vm.available / GIB,
        ram_bandwidth_gb_s=dmi_bandwidth_gb_s(run(["dmidecode", "-t", "memory"])),
        cpu=cpu_name(run), cpu_cores=ps.cpu_count(logical=False),
        os=f"{platform.system()} {platform.release()}".strip())
