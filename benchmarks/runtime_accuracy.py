"""Speed level and error of each runtime besides llama.cpp on the public run logs.

    python benchmarks/runtime_accuracy.py

Rows: data/measured/localmaxxing_public.csv (llmfit's public benchmark cache and community
results, AlexsJones/llmfit), engine ollama, mlx, vllm or sglang, whose device and model the
catalog resolves (the model by its Hugging Face repository, or its name without the
instruct/quantization suffix). Each row is estimated for its runtime at level 1 (llama.cpp's
calibrated speed for the same bytes and FLOPs on that card); the level is the median of
measured ÷ estimated, the range its 10th and 90th percentiles (estimate/runtimes.py holds the
figures). Protocols as llama.cpp's: in sample, leave-one-device-out (the level refitted
without the device's rows) and leave-one-architecture-out (without the model family's rows).
"""
from __future__ import annotations

import csv
import re
import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from tpscalc.catalog import get_card, get_model
from tpscalc.catalog.lookup import NameNotFoundError
from tpscalc.catalog.schema import Card, Model
from tpscalc.catalog.store import models
from tpscalc.estimate import engine
from tpscalc.estimate.query import EstimateInputError, Query, Rig
from tpscalc.estimate.runtimes import get_runtime

ROWS = ROOT / "data" / "measured" / "localmaxxing_public.csv"
# vLLM's 2023 tensor-parallel rows (mlc-ai/llm-perf-bench, PCIe): another vintage, shown apart
OLD_ROWS = ROOT / "data" / "measured" / "all_sources_public.csv"
OLD_MODELS = {"Llama-2-70B": "Llama 2-70B", "CodeLlama-34B": "Code Llama-34B"}
# the bench's "A100" is taken as the 80 GB PCIe card (its README says PCIe, not the size)
OLD_DEVICES = {"A100": "A100 PCIe 80 GB", "A10G": "A10G", "RTX 4090": "RTX 4090"}
ENGINES = {"ollama": "ollama", "mlx": "mlx", "vllm": "vllm", "sglang": "sglang"}
# the rows' quantization labels as each runtime's format
QUANTS = {"mlx-4bit": "MLX-4bit", "mlx-8bit": "MLX-8bit", "mlx-6bit": "MLX-6bit",
          "int4": "INT4", "awq": "INT4", "gptq": "INT4", "fp8": "FP8", "int8_w8a16": "FP8",
          "nvfp4": "NVFP4", "fp16": "BF16", "bf16": "BF16", "mxfp4": "MXFP4"}
SUFFIX = re.compile(r"(-(instruct|it|chat|gguf|mlx|awq|fp8|nvfp4|int4|qat|\d+bit|2507|2506|"
                    r"2410|2509|v0\.\d|4k))+$", re.IGNORECASE)


@dataclass(frozen=True)
class Row:
    """One measured row resolved to the catalog: its runtime, rig, model, format and speed."""

    runtime: str
    kind: str
    device: str
    model: str
    family: str
    rig: Rig
    quant: str | None
    tokens: int
    measured: float


def _model(row: dict[str, str]) -> Model | None:
    repo = row["model_hf"].lower()
    by_repo = _by_repo()
    for key in (repo, SUFFIX.sub("", repo)):
        if key and key in by_repo:
            return by_repo[key]
    tag, _, size = row["model"].partition(":")  # an ollama tag, "qwen3:8b"
    name = SUFFIX.sub("", tag).replace("Meta-Llama", "Llama")
    sized = f"{name}-{size.split('-')[0]}" if size and size[0].isdigit() else name
    for candidate in (sized, name, name.replace("-", " ")):
        try:
            return get_model(candidate)
        except (NameNotFoundError, ValueError):
            continue
    return None


@cache
def _by_repo() -> dict[str, Model]:
    return {(m.hf_repo or "").lower(): m for m in models()}


def _card(name: str) -> Card | None:
    """The catalog's card; for an Apple chip named without its GPU cores ("Apple M1 Max"),
    the variant with the most (the rows do not say which; assumed the larger bin)."""
    try:
        return get_card(name)
    except NameNotFoundError as exc:
        variants = [get_card(s) for s in exc.suggestions if s.startswith(name + " (")]
        return max(variants, key=lambda c: c.bandwidth_gb_s, default=None)


def _quant(row: dict[str, str], runtime: str) -> str | None:
    label = row["quant"].strip().lower()
    if runtime == "ollama":  # the library's default tags are Q4_K_M
        return row["quant"].upper() if label.startswith(("q", "iq", "mxfp4")) else "Q4_K_M"
    return QUANTS.get(label)


def rows() -> list[Row]:
    """The rows of ENGINES whose device, model and format resolve."""
    out = []
    with ROWS.open(newline="") as f:
        for r in csv.DictReader(f):
            runtime = ENGINES.get(r["engine"])
            if runtime is None or "ollama tag" in r["quant"] or not r["tokens_per_s"]:
                continue
            quant = _quant(r, runtime)
            model = _model(r)
            card = _card(r["device"])
            if card is None:
                continue
            if model is None or quant is None:
                continue
            count = max(1, int(r["gpu_count"] or 1))
            tokens = int(r["context_or_depth"] or 512) or 512
            family = model.slug.split("-")[0]
            out.append(Row(runtime, r["kind"], card.name, model.name, family,
                           Rig((card,) * count), quant, max(16, tokens), float(r["tokens_per_s"])))
    return out


def old_vllm_rows() -> list[Row]:
    """all_sources_public.csv's vLLM decode rows (2023), runtime "vllm-2023"."""
    out = []
    with OLD_ROWS.open(newline="") as f:
        for r in csv.DictReader(f):
            if r["runtime"] != "vLLM" or not r["test"].startswith("tg"):
                continue
            try:
                model = get_model(OLD_MODELS.get(r["model"], r["model"]))
                card = get_card(OLD_DEVICES.get(r["gpu"], r["gpu"]))
            except NameNotFoundError:
                continue
            quant = "BF16" if r["quant"] == "F16" else "INT4"
            out.append(Row("vllm-2023", "decode", card.name, model.name,
                           model.slug.split("-")[0], Rig((card,) * int(r["n_gpus"])), quant,
                           512, float(r["tokens_per_s"])))
    return out


def estimated(row: Row) -> float | None:
    """The row's speed at its runtime's level 1, tok/s (None when it does not fit)."""
    runtime = row.runtime.removesuffix("-2023")
    query = Query(context=max(4096, row.tokens + 256), runtime=runtime,
                  n_prompt=row.tokens if row.kind == "prefill" else 512, n_gen=128)
    try:
        e = engine.estimate(get_model(row.model), row.rig, query, row.quant, placed=False)
    except EstimateInputError:
        return None
    level = get_runtime(runtime).level
    if row.kind == "decode":
        return None if e.decode is None else e.decode.tokens_per_s / level.decode
    return None if e.prefill is None else e.prefill.tokens_per_s / level.prefill


def _quantile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))]


def report(runtime: str, kind: str, pairs: list[tuple[Row, float]]) -> None:
    """Level, range and the three protocols' median |error| for one runtime and kind."""
    ratios = [r.measured / e for r, e in pairs]
    level = statistics.median(ratios)
    devices = {r.device for r, _ in pairs}

    def held_out(key: str) -> list[float]:
        errs = []
        for group in {getattr(r, key) for r, _ in pairs}:
            rest = [r.measured / e for r, e in pairs if getattr(r, key) != group]
            if not rest:
                continue
            fit = statistics.median(rest)
            errs += [abs(r.measured / (e * fit) - 1) for r, e in pairs if getattr(r, key) == group]
        return errs

    inside = statistics.median([abs(x / level - 1) for x in ratios])
    lodo, loao = held_out("device"), held_out("family")
    print(f"{runtime:8} {kind:7} rows {len(pairs):3}  devices {len(devices):2}  level "
          f"{level:.2f}  range {_quantile(ratios, 0.1):.2f}-{_quantile(ratios, 0.9):.2f}  "
          f"median |err| in sample {inside:.0%}  LODO "
          f"{statistics.median(lodo) if lodo else float('nan'):.0%} ({len(lodo)} rows)  LOAO "
          f"{statistics.median(loao) if loao else float('nan'):.0%}")


def main() -> None:
    grouped: dict[tuple[str, str], list[tuple[Row, float]]] = defaultdict(list)
    skipped = 0
    for row in rows() + old_vllm_rows():
        e = estimated(row)
        if e is None or e <= 0:
            skipped += 1
            continue
        grouped[(row.runtime, row.kind)].append((row, e))
    for (runtime, kind), pairs in sorted(grouped.items()):
        report(runtime, kind, pairs)
    print(f"({skipped} resolved rows did not fit or were refused; rows whose model or device "
          "the catalog does not resolve are left out)")
    for (runtime, kind), pairs in sorted(grouped.items()):
        if runtime.startswith("vllm"):
            for r, e in pairs:
                print(f"  {runtime} {kind} {r.device} x{len(r.rig.devices)} {r.model} {r.quant}: "
                      f"measured {r.measured:g}, level-1 estimate {e:.1f}")


if __name__ == "__main__":
    main()
