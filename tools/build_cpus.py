"""Build src/tpscalc/catalog/data/cpus.json from tools/data/cpus.csv (hand-kept, one source URL
a row), deriving what the CSV leaves to arithmetic and saying so beside each figure:

- memory_bandwidth_gb_s: MT/s × 8 B × 64-bit channels of the fastest memory the CPU takes,
  unless the row states the vendor's figure (unified-memory chips; checked within 5 %);
- cpu_read_gb_s, what the cores can read: a measurement where the row gives one, else for AMD's
  chiplet CPUs CCDs × 32 B per fabric clock × FCLK (each CCD's link reads 32 B a clock, Zen
  2-5) × the share of that the one measured chiplet part reaches, else none;
- peak_fp32_gflops: P-cores × P-core clock × FP32 FLOPs per clock (the threads llama.cpp uses).

Run: python tools/build_cpus.py   (deterministic; a test rebuilds it and compares bytes)
"""
from __future__ import annotations

import csv
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from tpscalc.catalog.schema import Cpu
from tpscalc.catalog.slug import slugify

SOURCE = ROOT / "tools/data/cpus.csv"
OUT = ROOT / "src/tpscalc/catalog/data/cpus.json"
CCD_READ_BYTES_PER_CLOCK = 32  # AMD Infinity Fabric, CCD → IOD read width (Zen 2-5)
# The share of its CCD links' read a chiplet CPU reaches: the Threadripper PRO 7965WX's four
# CCDs read 225 GB/s with Intel MLC (ik_llama.cpp discussion 258; its row in cpus.csv) of
# 4 × 32 B × 2 GHz = 256 GB/s
CCD_READ_ACHIEVED = round(225 / (4 * CCD_READ_BYTES_PER_CLOCK * 2.0), 3)
_RATE = re.compile(r"^(?:LP)?DDR[345]X?-(\d{4,5})$")


def _float(text: str) -> float | None:
    return float(text) if text.strip() else None


def _memory(row: dict[str, str]) -> tuple[float, str]:
    found = _RATE.match(row["memory_type"])
    if found is None:
        raise ValueError(f"{row['name']}: memory_type {row['memory_type']!r} is not like DDR5-5600")
    channels = int(row["memory_channels"])
    derived = int(found.group(1)) * 8 * channels / 1000
    stated = _float(row["memory_bandwidth_gb_s"])
    if stated is None:
        return round(derived, 2), (f"derived: {channels} × 64-bit channels × 8 B × "
                                   f"{found.group(1)} MT/s")
    if abs(stated / derived - 1) > 0.05:
        raise ValueError(f"{row['name']}: stated {stated} GB/s is not {derived:.1f} (±5 %)")
    return stated, f"vendor figure ({row['memory_type']} × {channels * 64} bits: {derived:.1f})"


def _cpu_read(row: dict[str, str]) -> tuple[float | None, str | None]:
    measured = _float(row["cpu_read_gb_s"])
    if measured is not None:
        if not row["cpu_read_source"].startswith("measured: "):
            raise ValueError(f"{row['name']}: a cpu_read_gb_s needs its 'measured: ' source")
        return measured, row["cpu_read_source"]
    if row["ccds"]:
        ccds, fclk = int(row["ccds"]), int(row["fclk_mhz"])
        gb_s = ccds * CCD_READ_BYTES_PER_CLOCK * fclk / 1000 * CCD_READ_ACHIEVED
        return round(gb_s, 2), (f"derived: {ccds} CCD × {CCD_READ_BYTES_PER_CLOCK} B per fabric "
                                f"clock × FCLK {fclk} MHz × {CCD_READ_ACHIEVED} (the share the "
                                "Threadripper PRO 7965WX reaches: 225 of 256 GB/s)")
    return None, None


def cpu_record(row: dict[str, str]) -> dict[str, Any]:
    """One CSV row as the validated record written to cpus.json."""
    bandwidth, bandwidth_source = _memory(row)
    read, read_source = _cpu_read(row)
    p_cores, clock = int(row["p_cores"]), float(row["p_clock_ghz"])
    flops = int(row["p_fp32_flops_per_clock"])
    record = {
        "name": row["name"], "slug": slugify(row["name"]), "vendor": row["vendor"],
        "microarchitecture": row["microarchitecture"], "p_cores": p_cores,
        "e_cores": int(row["e_cores"]), "p_clock_ghz": clock, "simd": row["simd"],
        "p_fp32_flops_per_clock": flops, "peak_fp32_gflops": round(p_cores * clock * flops, 1),
        "memory_type": row["memory_type"], "memory_channels": int(row["memory_channels"]),
        "memory_bandwidth_gb_s": bandwidth, "memory_bandwidth_source": bandwidth_source,
        "cpu_read_gb_s": read, "cpu_read_source": read_source,
        "cards": [c for c in row["cards"].split(";") if c], "source_url": row["source_url"],
        "note": row["note"]}
    Cpu.model_validate(record)
    return record


def build() -> dict[str, Any]:
    """The whole file: every CSV row, in CSV order."""
    with SOURCE.open(encoding="utf-8", newline="") as fh:
        rows = [cpu_record(r) for r in csv.DictReader(fh)]
    slugs = [r["slug"] for r in rows]
    if len(set(slugs)) != len(slugs):
        raise ValueError("two CPUs share a slug")
    return {"generated_by": "tools/build_cpus.py from tools/data/cpus.csv", "cpus": rows}


def dumps(doc: dict[str, Any]) -> str:
    """cpus.json's text."""
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def main() -> int:
    doc = build()
    OUT.write_text(dumps(doc), encoding="utf-8")
    print(f"wrote {OUT.name}: {len(doc['cpus'])} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
