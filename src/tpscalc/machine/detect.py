"""Put the detectors together: the machine's GPUs matched to catalog cards, RAM, CPU, a `Rig`."""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from tpscalc.catalog import NameNotFoundError, cpu_of_card, get_cpu, store
from tpscalc.catalog.schema import Card, Cpu
from tpscalc.estimate.query import Rig
from tpscalc.machine.apple import Run, detect_apple, run_command
from tpscalc.machine.match import match_card
from tpscalc.machine.nvidia import Nvml, PyNvml, detect_nvidia
from tpscalc.machine.sysfs import detect_sysfs
from tpscalc.machine.system import detect_system
from tpscalc.machine.types import DetectedGpu, SystemInfo

# Stated when DMI cannot be read: dual-channel DDR4-3200, 2 channels × 8 B × 3200 MT/s, the
# common desktop configuration; the note says it is assumed.
DEFAULT_RAM_BANDWIDTH_GB_S = 51.2
_SYSTEM_DEFAULT: Any = object()


@dataclass(frozen=True)
class FoundGpu:
    """A detected GPU and the catalog card it matched (None: unmatched or ambiguous)."""

    detected: DetectedGpu
    card: Card | None
    candidates: tuple[str, ...] = ()


@dataclass(frozen=True)
class Machine:
    """This machine: GPUs, system, its rig (matched cards and RAM, or the CPU and RAM), notes."""

    gpus: tuple[FoundGpu, ...]
    system: SystemInfo
    ram_bandwidth_gb_s: float  # measured from DMI, else the stated default
    rig: Rig | None
    notes: tuple[str, ...] = field(default=())

    @property
    def cards(self) -> tuple[Card, ...]:
        """The matched cards, in detection order."""
        return self.rig.devices if self.rig else ()


def _as_card(found: FoundGpu) -> Card | None:
    """The matched card, holding this machine's memory where it is configurable (Apple)."""
    card, gpu = found.card, found.detected
    if card is None:
        return None
    update: dict[str, Any] = {}
    if card.unified_memory and gpu.memory_gib:
        update["memory_gib"] = round(gpu.memory_gib, 2)
    if gpu.usable_fraction:
        update["gpu_memory_fraction"] = round(gpu.usable_fraction, 4)
    return card.model_copy(update=update) if update else card


def _notes(found: Sequence[FoundGpu], system: SystemInfo, is_root: bool) -> list[str]:
    notes = []
    for f in found:
        g = f.detected
        if f.card is None:
            mem = f"{g.memory_gib:.1f} GiB" if g.memory_gib else "unknown memory"
            why = (f"it could be {', '.join(f.candidates[:4])}" if f.candidates
                   else "no catalog card matches it")
            notes.append(f"{g.name} ({mem}) is not matched to a catalog card: {why}; its "
                         "memory is reported, but speeds need a catalog card (name one with "
                         "--card).")
    if not found:
        notes.append("No GPU found (NVML, amdgpu/Intel sysfs, system_profiler): this machine is "
                     f"answered for CPU-only, with {system.ram_gib:.1f} GiB of RAM "
                     "(`tpscalc estimate --model M --here`); name a card to compare with one.")
    if system.ram_bandwidth_gb_s is None:
        why = ("dmidecode gave no memory speed: not installed, or no DMI memory table, as in "
               "most virtual machines" if is_root else "DMI not readable without root")
        notes.append(f"RAM bandwidth unknown ({why}): assumed "
                     f"{DEFAULT_RAM_BANDWIDTH_GB_S} GB/s, dual-channel DDR4-3200.")
    cards = [f for f in found if f.card is not None]
    if len(cards) > 1:
        notes.append("Several GPUs: `estimate --here` splits a model across them as llama.cpp "
                     "does; the model and card reports use the first.")
    return notes


def _running_as_root() -> bool:
    """Whether this process runs as root (where dmidecode could read DMI)."""
    import os

    return hasattr(os, "geteuid") and os.geteuid() == 0


def detect(*, nvml: Nvml | None = _SYSTEM_DEFAULT, sysfs_root: Path = Path("/"),
           run: Run = run_command, psutil_module: Any | None = None,
           cards: Sequence[Card] | None = None, is_root: bool | None = None) -> Machine:
    """Detect this machine; every argument is a seam (tests pass recordings of real machines).

    is_root: whether DMI was readable in principle (None: this process's user is root)."""
    nv = PyNvml.open() if nvml is _SYSTEM_DEFAULT else nvml
    gpus = detect_nvidia(nv) + detect_sysfs(sysfs_root) + detect_apple(run)
    system = detect_system(run, psutil_module)
    catalog = store.cards() if cards is None else cards
    found = []
    for g in gpus:
        card, options = match_card(g, catalog)
        found.append(FoundGpu(g, card, tuple(c.name for c in options) if card is None else ()))
    devices = tuple(c for c in (_as_card(f) for f in found) if c is not None)
    bandwidth = system.ram_bandwidth_gb_s
    if bandwidth is None and devices and devices[0].unified_memory:
        bandwidth = devices[0].bandwidth_gb_s  # unified memory: the chip's own bandwidth
        system = SystemInfo(system.ram_gib, system.ram_available_gib, bandwidth, system.cpu,
                            system.cpu_cores, system.os)
    ram_bw = bandwidth if bandwidth is not None else DEFAULT_RAM_BANDWIDTH_GB_S
    # The machine's own rig: its matched cards, or no card and its RAM (CPU-only); None only
    # when neither a card nor the RAM size is known.
    cpu = next((c for c in map(cpu_of_card, devices) if c is not None), None) \
        or table_cpu(system.cpu)
    notes = _notes(found, system, _running_as_root() if is_root is None else is_root)
    if cpu is None and system.cpu_cores:  # not in the table: its cores bound it still
        cpu = cores_cpu(system, ram_bw, _read(sysfs_root / "proc" / "cpuinfo"))
        notes.append(f"CPU {system.cpu!r} is not in the CPU table: answered with the "
                     f"{cpu.p_cores} cores found at the fitted per-core rate, "
                     f"{cpu.p_clock_ghz:g} GHz ({cpu.note}).")
    os_name, headroom = _host(system)
    if headroom is not None:
        notes.append(f"RAM headroom {headroom:.1f} GiB: what the OS and other programs use now "
                     "(--ram-headroom to plan for another moment).")
    rig = (Rig(devices, ram_gib=system.ram_gib, ram_bandwidth_gb_s=ram_bw, cpu=cpu,
               os=os_name, ram_headroom_gib=headroom)
           if devices or system.ram_gib else None)
    return Machine(tuple(found), system, ram_bw, rig, tuple(notes))


_OS_NAMES = {"Linux": "linux", "Windows": "windows", "Darwin": "macos"}


def _host(system: SystemInfo) -> tuple[str | None, float | None]:
    """This machine's OS as the estimate names it (None: another) and the RAM its OS and other
    programs hold now, GiB (None when the available RAM is unknown)."""
    os_name = _OS_NAMES.get(system.os.split(" ", 1)[0]) if system.os else None
    if not (system.ram_gib and system.ram_available_gib):
        return os_name, None
    return os_name, round(max(0.0, system.ram_gib - system.ram_available_gib), 2)


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


# A CPU the table lacks: its clock when /proc/cpuinfo gives none (assumed, a mid desktop/server
# base clock), and FP32 FLOPs per clock and core: 32, what 61 of the CPU table's 82 entries
# hold (two 8-lane FMA units, or one 16-lane AVX-512 unit; catalog/data/cpus.json).
ASSUMED_CLOCK_GHZ = 3.0
FLOPS_PER_CLOCK = 32


def cores_cpu(system: SystemInfo, ram_bandwidth_gb_s: float, cpuinfo: str = "") -> Cpu:
    """A CPU record for a CPU the table does not hold: the physical cores found (llama.cpp's
    default threads), the clock and SIMD from /proc/cpuinfo (`cpuinfo`, its text) when there,
    and the RAM bandwidth in use; no CPU-complex limit (unknown)."""
    mhz = [float(m) for m in re.findall(r"^cpu MHz\s*:\s*([\d.]+)", cpuinfo, re.MULTILINE)]
    clock = round(max(mhz) / 1000, 2) if mhz and max(mhz) > 0 else ASSUMED_CLOCK_GHZ
    first = re.search(r"^(?:flags|Features)\s*:\s*(.*)$", cpuinfo, re.MULTILINE)
    flags = set(first.group(1).split()) if first else set()
    simd: Literal["AVX2", "AVX-512", "NEON"] = (
        "AVX-512" if "avx512f" in flags else "NEON" if {"asimd", "neon"} & flags else "AVX2")
    cores = max(1, int(system.cpu_cores or 1))
    brand = system.cpu or "unknown CPU"
    vendor = next((v for v in ("Intel", "AMD", "Apple") if v.lower() in brand.lower()), "unknown")
    return Cpu(name=brand[:200] or "unknown CPU", slug="this-machines-cpu", vendor=vendor,
               microarchitecture="unknown", p_cores=min(cores, 512), e_cores=0,
               p_clock_ghz=min(clock, 7.0), simd=simd, p_fp32_flops_per_clock=FLOPS_PER_CLOCK,
               peak_fp32_gflops=min(cores, 512) * min(clock, 7.0) * FLOPS_PER_CLOCK,
               memory_type="unknown", memory_channels=2,
               memory_bandwidth_gb_s=min(ram_bandwidth_gb_s, 2000),
               memory_bandwidth_source="this machine's RAM bandwidth (DMI, else assumed)",
               source_url="this machine: /proc/cpuinfo and psutil",
               note="clock from /proc/cpuinfo" if mhz else f"clock assumed {clock:g} GHz")


# What CPU brand strings add to a name ("AMD Ryzen 9 7950X 16-Core Processor",
# "13th Gen Intel(R) Core(TM) i9-13900K", "Intel(R) Xeon(R) w9-3495X CPU @ 1.90GHz")
_BRAND_NOISE = re.compile(r"\((?:R|TM)\)|\b\d+-Core Processor\b|\bProcessor\b|\bCPU @ .*$|"
                          r"\b\d+th Gen\b|\bw/ .*$|\bwith Radeon .*$", re.IGNORECASE)


def table_cpu(brand: str) -> Cpu | None:
    """The CPU table's entry for an OS brand string, None when it names none (or several)."""
    name = " ".join(_BRAND_NOISE.sub(" ", brand).split())
    try:
        return get_cpu(name) if name else None
    except NameNotFoundError:
        return None


def machine_json(m: Machine) -> dict[str, Any]:
    """The `tpscalc here --json` shape (GiB, GB/s)."""
    def gib(v: float | None) -> float | None:
        return round(v, 2) if v is not None else None

    return {
        "gpus": [{"name": f.detected.name, "card": f.card.name if f.card else None,
                  "memory_gib": gib(f.detected.memory_gib), "free_gib": gib(f.detected.free_gib),
                  "backend": f.detected.backend, "pcie": f.detected.pcie} for f in m.gpus],
        "ram_gib": gib(m.system.ram_gib), "ram_available_gib": gib(m.system.ram_available_gib),
        "ram_bandwidth_gb_s": m.ram_bandwidth_gb_s,
        "ram_bandwidth_measured": m.system.ram_bandwidth_gb_s is not None,
        "cpu": m.system.cpu, "cpu_cores": m.system.cpu_cores, "os": m.system.os,
        "rig": None if m.rig is None else {
            "devices": [d.name for d in m.rig.devices], "ram_gib": gib(m.rig.ram_gib),
            "ram_bandwidth_gb_s": m.rig.ram_bandwidth_gb_s},
        "notes": list(m.notes),
    }
