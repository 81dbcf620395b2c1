"""The llama.cpp decode estimate checked on a source the calibration never reads.

    python benchmarks/public_runs.py

Rows: the llama.cpp decode rows of data/measured/localmaxxing_public.csv (llmfit's public
benchmark cache and community `bench` files; self-reported, unverified, kept out of the fit by
its README) run on one GPU by `llama-bench`, llmfit's own llama.cpp bench or `llama-server` (its
decode timings), every layer on the GPU (no `ngl` under 99), an f16 KV cache, and none of the
tags that change the work (`ncmoe`, `ot`, `nkvo`, `nbatch`, `mtp_model`, `implausible`). A row
without a backend is taken as CUDA on an NVIDIA card and Metal on an Apple chip. The decode
depth is `d` plus the prompt `p` (the leaderboard's runs generate after their prompt: the same
model's rate falls as `p` grows, 175 tokens/s at 512 to 113 at 131,072 for Trinity-Mini on an
RTX 3090). Each row is estimated with the committed calibration at its depth and backend.

Three tables, seconds:
1. Median |error|, p90, median bias and the share inside the estimate's range, by group. The
   leave-one-out protocols of benchmarks/accuracy.py hold out rows of the sources the fit
   reads; these rows come from another source, harness and set of machines altogether.
2. Each MoE row of a chip maker with a MoE matrix cost (Calibration.moe_matrix_mb), its measured
   ÷ estimated over the median of its device's dense rows of the same harness: the cost against
   the machine's own level, as committed and with none.
3. The other runtimes' decode level against llama.cpp on the same machine: each MLX or ollama
   row's measured ÷ estimated over the median of the same device's llama.cpp rows (three or
   more), beside estimate/runtimes.py's level (measured ÷ estimated alone).
"""
from __future__ import annotations

import csv
import dataclasses
import statistics
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import runtime_accuracy

from tpscalc.catalog.schema import Card, Model
from tpscalc.estimate import engine
from tpscalc.estimate.calibration import Calibration
from tpscalc.estimate.calibration_store import calibration
from tpscalc.estimate.query import EstimateInputError, Query, Rig
from tpscalc.estimate.types import Estimate

ROWS = ROOT / "data" / "measured" / "localmaxxing_public.csv"
TOOLS = ("llama-bench", "llmfit-bench-llamacpp", "llama-server")
# tags of a run whose work is not the plain decode of the file on the GPU
CHANGED_WORK = ("ncmoe", "ot", "nkvo", "nbatch", "mtp_model", "implausible")
BACKENDS = {"CUDA": "cuda", "ROCm": "rocm", "Vulkan": "vulkan", "Metal": "metal",
            "SYCL": "sycl"}
BLANK_BACKEND = {"NVIDIA": "cuda", "Apple": "metal"}  # a row without one, by the card's maker
ALL_LAYERS = 99
MIN_REFERENCE_ROWS = 3  # rows a device's level needs (its dense rows, its llama.cpp rows)


@dataclass(frozen=True)
class Run:
    """One public llama.cpp decode row and its estimate."""

    card: Card
    model: Model
    backend: str
    tool: str
    quant: str
    depth: int
    measured: float
    estimated: float
    low: float
    high: float
    confidence: str

    @property
    def moe(self) -> bool:
        arch = self.model.architecture
        return bool(arch and arch.moe_intermediate_size)


def _tags(source_row: str) -> dict[str, str]:
    """The row's `;`-separated tags after its run id, `key=value` or a bare key."""
    out = {}
    for tag in source_row.split(";")[1:]:
        key, _, value = tag.partition("=")
        out[key] = value
    return out


def _quant(label: str) -> str | None:
    """The row's GGUF type, None for another format."""
    q = label.strip().upper()
    return q if q.startswith(("Q", "IQ", "MXFP4", "BF16", "F16")) else None


def _backend(row: dict[str, str], card: Card) -> str | None:
    if row["backend"]:
        return BACKENDS.get(row["backend"])
    return BLANK_BACKEND.get(card.vendor or "")


def _depth(row: dict[str, str], tags: dict[str, str]) -> int:
    """The decode's depth: the KV cache before its first generated token, tokens."""
    return int(tags.get("d") or row["context_or_depth"] or 0) + int(tags.get("p") or 0)


def _estimate(card: Card, model: Model, backend: str, quant: str, depth: int, n_gen: int,
              flash_attn: bool) -> Estimate | None:
    """The estimate of `model` on `card` for a llama-bench decode of `n_gen` tokens at `depth`
    (None where it is refused)."""
    query = Query(context=max(4096, depth + n_gen + 256), n_prompt=0, n_gen=n_gen, depth=depth,
                  backend=backend, flash_attn=flash_attn)
    try:
        return engine.estimate(model, Rig((card,)), query, quant, placed=False)
    except EstimateInputError:
        return None


def runs() -> tuple[list[Run], dict[str, int]]:
    """The rows the module docstring keeps, estimated; and how many were left out, by reason."""
    out: list[Run] = []
    left: dict[str, int] = defaultdict(int)
    with ROWS.open(newline="") as f:
        for r in csv.DictReader(f):
            if r["engine"] != "llama.cpp" or r["kind"] != "decode" or not r["tokens_per_s"]:
                continue
            tags = _tags(r["source_row"])
            reason = ("several GPUs" if (r["gpu_count"] or "1") != "1"
                      else "harness" if tags.get("tool") not in TOOLS
                      else "changed work" if any(k in tags for k in CHANGED_WORK)
                      else "quantized KV" if tags.get("kv", "f16") not in ("f16", "fp16")
                      else "partial offload" if int(tags.get("ngl") or ALL_LAYERS) < ALL_LAYERS
                      else "")
            card = runtime_accuracy._card(r["device"])
            model = runtime_accuracy._model(r)
            quant = _quant(r["quant"])
            backend = _backend(r, card) if card else None
            if not reason and (card is None or model is None or quant is None or not backend):
                reason = "not resolved"
            if reason:
                left[reason] += 1
                continue
            assert card and model and quant and backend
            depth = _depth(r, tags)
            e = _estimate(card, model, backend, quant, depth, int(tags.get("n") or 128),
                          tags.get("fa", "1") in ("1", "on", "true"))
            if e is None or e.decode is None:
                left["does not fit"] += 1
                continue
            out.append(Run(card, model, backend, str(tags["tool"]), quant, depth,
                           float(r["tokens_per_s"]), e.decode.tokens_per_s, e.decode.low,
                           e.decode.high, e.decode.confidence))
    return out, dict(left)


def _quantile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))]


def _cells(rows: list[Run]) -> str:
    errors = [r.estimated / r.measured - 1 for r in rows]
    inside = sum(r.low <= r.measured <= r.high for r in rows) / len(rows)
    return (f"{statistics.median(abs(e) for e in errors):.1%} | "
            f"{_quantile([abs(e) for e in errors], 0.9):.0%} | "
            f"{statistics.median(errors):+.0%} | {inside:.0%} | {len(rows)}")


def error_table(rows: list[Run]) -> str:
    """Table 1: error and range coverage by group (error: estimated ÷ measured - 1)."""
    groups: list[tuple[str, Callable[[Run], bool]]] = [("all", lambda r: True)]
    for attr in ("backend", "tool", "confidence"):
        for v in sorted({getattr(r, attr) for r in rows}):
            groups.append((f"{attr} {v}", lambda r, a=attr, v=v: getattr(r, a) == v))
    groups += [("mixture of experts", lambda r: r.moe), ("dense", lambda r: not r.moe),
               ("depth >= 4k", lambda r: r.depth >= 4096)]
    by_device = defaultdict(list)
    for r in rows:
        by_device[r.card.name].append(r)
    for name in sorted(by_device, key=lambda n: -len(by_device[n])):
        if len(by_device[name]) >= 4:
            groups.append((f"device {name}", lambda r, n=name: r.card.name == n))
    lines = ["| rows | median abs. error | p90 | median bias | inside the range | rows |",
             "|---|---|---|---|---|---|"]
    for label, keep in groups:
        chosen = [r for r in rows if keep(r)]
        if chosen:
            lines.append(f"| {label} | {_cells(chosen)} |")
    return "\n".join(lines)


def _dense_level(rows: Iterable[Run]) -> dict[tuple[str, str], float]:
    """Median measured ÷ estimated of each (device, harness)'s dense rows."""
    ratios = defaultdict(list)
    for r in rows:
        if not r.moe:
            ratios[(r.card.name, r.tool)].append(r.measured / r.estimated)
    return {k: statistics.median(v) for k, v in ratios.items() if len(v) >= MIN_REFERENCE_ROWS}


def _without_moe_cost() -> Calibration:
    return dataclasses.replace(calibration(), moe_matrix_mb={})


def moe_table(rows: list[Run]) -> str:
    """Table 2: each MoE row against its device's dense level, with and without the MoE cost."""
    level = _dense_level(rows)
    cal = _without_moe_cost()
    costs = calibration().moe_matrix_mb
    lines = [("| device | harness | model | quant | measured t/s | ÷ dense level, committed cost "
              "| ÷ dense level, no MoE cost |"), "|---|---|---|---|---|---|---|"]
    with_cost, without = [], []
    for r in rows:
        ref = level.get((r.card.name, r.tool))
        if not r.moe or ref is None or not costs.get(r.card.vendor or ""):
            continue
        with mock.patch.object(engine, "calibration", lambda: cal):
            e = _estimate(r.card, r.model, r.backend, r.quant, r.depth, 128, True)
        bare = e.decode.tokens_per_s if e and e.decode else float("nan")
        a, b = r.measured / r.estimated / ref, r.measured / bare / ref
        with_cost.append(a - 1)
        without.append(b - 1)
        lines.append(f"| {r.card.name} | {r.tool} | {r.model.name} | {r.quant} | {r.measured:g} "
                     f"| {a:.2f} | {b:.2f} |")
    if with_cost:
        lines.append(f"| median abs. error ({len(with_cost)} rows) | | | | | "
                     f"{statistics.median(abs(x) for x in with_cost):.1%} | "
                     f"{statistics.median(abs(x) for x in without):.1%} |")
    return "\n".join(lines)


def runtime_table(rows: list[Run]) -> str:
    """Table 3: MLX and ollama decode against llama.cpp's rows of the same device."""
    reference: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        reference[r.card.name].append(r.measured / r.estimated)
    lines = [("| runtime | rows | level (÷ estimate) | rows with a reference | level against "
              "llama.cpp on the same device | reference devices |"), "|---|---|---|---|---|---|"]
    pairs: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for row in runtime_accuracy.rows():
        if row.kind != "decode" or row.runtime not in ("mlx", "ollama"):
            continue
        e = runtime_accuracy.estimated(row)
        if e:
            pairs[row.runtime].append((row.device, row.measured / e))
    for runtime, items in sorted(pairs.items()):
        paired = [x / statistics.median(reference[d]) for d, x in items
                  if len(reference[d]) >= MIN_REFERENCE_ROWS]
        devices = sorted({d for d, _ in items if len(reference[d]) >= MIN_REFERENCE_ROWS})
        lines.append(f"| {runtime} | {len(items)} | {statistics.median(x for _, x in items):.2f} "
                     f"| {len(paired)} | "
                     f"{statistics.median(paired) if paired else float('nan'):.2f} | "
                     f"{', '.join(devices) or '-'} |")
    return "\n".join(lines)


def main() -> int:
    """Print the three tables."""
    rows, left = runs()
    print(f"{len(rows)} llama.cpp decode rows kept; left out: "
          + ", ".join(f"{n} {k}" for k, n in sorted(left.items())) + "\n")
    print("Error (estimated ÷ measured - 1) and the range's coverage:\n")
    print(error_table(rows))
    print("\nMoE rows against their device's dense rows of the same harness:\n")
    print(moe_table(rows))
    print("\nOther runtimes against llama.cpp on the same device:\n")
    print(runtime_table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
