"""Replay llama-bench rows through `tpscalc estimate --input`: the public extra rows, measured vs
us.

    python benchmarks/replay.py [--write FILE.csv]

Takes the single-GPU, fully offloaded rows of ../shared/data/measured/llamacpp_extra_calibration.csv
(MoE, decode and prompt at depth), writes them as an `estimate --input` CSV with llama-bench's
columns (n_prompt, n_gen, depth, flash_attn, n_ubatch), runs it through the Python API that the
CLI calls, and prints measured against estimated. Model and card labels are mapped as the
calibration maps them (tools/calibration_data.py); GGUF types off the product's quality ladder
(Q4_0, MXFP4) are accepted for replay. A row that cannot be estimated is shown with its error
and counted. These rows are also in the fit, so this shows the replay path and the in-sample
fit; benchmarks/accuracy.py holds devices out.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tools"))

from calibration_data import (
    EXTRA_CSV,
    extra_gpu_name,
    extra_model_name,
    normalise_quant,
    single_gpu_rows,
)

from tpscalc import api

COLUMNS = (
    "model",
    "gpu",
    "quant",
    "backend",
    "n_prompt",
    "n_gen",
    "depth",
    "flash_attn",
    "n_ubatch",
    "measured_tokens_per_s",
)


def replay_rows(path: Path = EXTRA_CSV) -> Iterator[dict[str, str]]:
    """llama-bench rows (one GPU, every layer on it) as `estimate --input` requests."""
    for r, m in single_gpu_rows(path):
        model = extra_model_name(r["model"])
        if model is None:
            continue
        gpu = extra_gpu_name(r["gpu"]) or r["gpu"]
        gpu = {"NVIDIA GB10 (DGX Spark)": "GB10"}.get(gpu, gpu)
        n = m.group(2)
        yield {
            "model": model,
            "gpu": gpu,
            "quant": normalise_quant(r["quant"]),
            "backend": r["backend"].lower(),
            "n_prompt": n if m.group(1) == "pp" else "0",
            "n_gen": n if m.group(1) == "tg" else "0",
            "depth": m.group(3) or "0",
            "flash_attn": r["flash_attn"] or "1",
            "n_ubatch": "512",
            "measured_tokens_per_s": r["tokens_per_s"],
        }


def to_csv(rows: Sequence[dict[str, str]]) -> str:
    """The rows as CSV text with the llama-bench columns."""
    out = io.StringIO()
    w = csv.DictWriter(out, COLUMNS, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return out.getvalue()


def compare(rows: Sequence[dict[str, str]]) -> list[tuple[dict[str, str], dict, float | None]]:
    """(request, estimate, estimated tokens/s of the measured kind or None on error) per row."""
    results = api.evaluate_many(rows)
    out = []
    for req, res in zip(rows, results):
        kind = "prefill" if req["n_prompt"] != "0" else "decode"
        value = res[kind]["tokens_per_s"] if res.get(kind) else None
        out.append((req, res, value))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Print measured against estimated for every replayable row, then the medians."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", type=Path, help="also write the estimate --input CSV here")
    args = ap.parse_args(argv)
    rows = list(replay_rows())
    if args.write:
        args.write.write_text(to_csv(rows), encoding="utf-8")
    print("| card | model | quant | test | measured t/s | estimated t/s | error |")
    print("|---|---|---|---|---|---|---|")
    errs: dict[str, list[float]] = {"decode": [], "prefill": []}
    failed = 0
    for req, res, value in compare(rows):
        kind = "prefill" if req["n_prompt"] != "0" else "decode"
        test = (f"pp{req['n_prompt']}" if kind == "prefill" else f"tg{req['n_gen']}") + (
            f" @ d{req['depth']}" if req["depth"] != "0" else ""
        )
        measured = float(req["measured_tokens_per_s"])
        if value is None:
            failed += 1
            print(
                f"| {req['gpu']} | {req['model']} | {req['quant']} | {test} | {measured:,.1f} | "
                f"error: {res.get('error')} | – |"
            )
            continue
        err = value / measured - 1
        errs[kind].append(abs(err) * 100)
        print(
            f"| {req['gpu']} | {req['model']} | {req['quant']} | {test} | {measured:,.1f} | "
            f"{value:,.1f} | {err * 100:+.0f} % |"
        )
    print()
    for kind, e in errs.items():
        if e:
            print(
                f"Replayed {kind}: {len(e)} rows, median absolute error {np.median(e):.1f} %, "
                f"p90 {np.percentile(e, 90):.1f} %."
            )
    print(f"Not replayable (unknown quantization, card or model): {failed} rows.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
