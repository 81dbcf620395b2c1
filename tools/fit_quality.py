"""Fit the quality model (tpscalc.estimate.quality) on data/measured/quality_kld.csv and write its
coefficients, its leave-one-model-out error and its sources to the package data
(src/tpscalc/catalog/data/quality.json).

The fit, by least squares:
- ln(mean KLD) = a + b·bpw + c·ln(parameters, billions) + d·MoE + e·imatrix + f·legacy
  (d is held at 0: fitted, it makes the leave-one-model-out error larger; quality.json says so).
  Quantization noise falls about fourfold per extra bit (a uniform quantizer's error variance
  goes as 2^-2b), so the logarithm of the divergence is close to linear in bits per weight;
  larger models average the noise over more weights; an importance matrix spends the bits
  where the activations are; the legacy types (Q4_0, Q4_1, Q5_0, Q5_1: one scale per 32
  weights, no super-block) lose more at equal bits.
- ln(100 − top-token agreement %) = g + h·ln(mean KLD), on the rows that give both.
Leave-one-model-out: each model in turn is left out, the same fit is made on the others (a term
whose column is constant there is dropped) and the left-out model's rows are predicted; the
residuals in ln(KLD) give the published error and the range an estimate carries.

Run: python tools/fit_quality.py [--check] (--check: fail if quality.json is not what the data
gives, for CI; prints the leave-one-model-out table either way).
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "measured" / "quality_kld.csv"
OUT = ROOT / "src" / "tpscalc" / "catalog" / "data" / "quality.json"
TERMS = ("intercept", "bpw", "ln_params_b", "moe", "imatrix", "legacy")
LEGACY = frozenset({"Q4_0", "Q4_1", "Q5_0", "Q5_1"})
RANGE_PERCENTILES = (10, 90)  # the range an estimate carries: 80 % of the left-out residuals
# One family at two sizes, the same variant and quant types (Gemma 2 27B-Instruct against 9B base
# and Llama 3.2 3B against 3.1 8B are left out: not the same variant or release).
SIZE_PAIRS = (("Llama 2-70B", "Llama 2-7B"), ("Qwen2.5-32B-Instruct", "Qwen2.5-7B-Instruct"))
PPL_NOISE = 0.005  # ln(PPL ratio) below this is within the scoreboards' error


def read_rows(path: Path = DATA) -> list[dict[str, str]]:
    """The CSV's rows, as text."""
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def features(bpw: float, params_b: float, moe: bool, imatrix: bool, legacy: bool) -> list[float]:
    """The fit's columns for one quantized file (TERMS order)."""
    return [1.0, bpw, math.log(params_b), float(moe), float(imatrix), float(legacy)]


def _design(rows: list[dict[str, str]]) -> tuple[np.ndarray, np.ndarray]:
    x = np.array([features(float(r["bpw"]), float(r["params_b"]), r["moe"] == "1",
                           r["imatrix"] == "1", r["quant"] in LEGACY) for r in rows])
    y = np.log(np.array([float(r["kld_mean"]) for r in rows]))
    return x, y


def size_exponent(rows: list[dict[str, str]]) -> float:
    """d ln(KLD) / d ln(parameters) within a family: each SIZE_PAIRS pair's same types, by
    ln(PPL ratio) (which tracks mean KLD: 0.9× it on Llama 3 8B), on the types whose ln(PPL
    ratio) is above the noise (PPL_NOISE) in both; the mean over pairs of each pair's mean
    (0 when no pair is in `rows`)."""
    per_pair = []
    for big_name, small_name in SIZE_PAIRS:
        big = {r["quant"]: r for r in rows if r["model"] == big_name and r["ppl_ratio"]}
        small = {r["quant"]: r for r in rows if r["model"] == small_name and r["ppl_ratio"]}
        slopes = []
        for q in sorted(big.keys() & small.keys()):
            lb, ls = (math.log(float(t[q]["ppl_ratio"])) for t in (big, small))
            if min(lb, ls) > PPL_NOISE:
                ratio = float(big[q]["params_b"]) / float(small[q]["params_b"])
                slopes.append(math.log(lb / ls) / math.log(ratio))
        if slopes:
            per_pair.append(float(np.mean(slopes)))
    return float(np.mean(per_pair)) if per_pair else 0.0


def fit(rows: list[dict[str, str]], moe_term: bool = False) -> np.ndarray:
    """Coefficients in TERMS order.

    Within each model (one intercept per model): the slopes in bpw, imatrix and legacy, by
    least squares. Between models: ln_params from the Llama 2 size pair (size_exponent), the
    dense intercept as the mean of the dense models' intercepts net of size, the MoE term as
    the MoE models' mean offset from it (0 without a MoE model). A slope whose column is
    constant within every model is 0.
    """
    kld = [r for r in rows if r["kld_mean"]]
    names = sorted({r["model"] for r in kld})
    x, y = _design(kld)
    dummies = np.array([[float(r["model"] == n) for n in names] for r in kld])
    within = [1, 4, 5]  # bpw, imatrix, legacy
    cols = [j for j in within if any(np.ptp(x[[r["model"] == n for r in kld], j]) > 0
                                     for n in names)]
    sol = np.linalg.lstsq(np.hstack([dummies, x[:, cols]]), y, rcond=None)[0]
    coef = np.zeros(len(TERMS))
    coef[cols] = sol[len(names):]
    coef[2] = size_exponent(rows)
    params = {r["model"]: float(r["params_b"]) for r in kld}
    moe = {r["model"]: r["moe"] == "1" for r in kld}
    net = {n: sol[i] - coef[2] * math.log(params[n]) for i, n in enumerate(names)}
    dense = [v for n, v in net.items() if not moe[n]]
    coef[0] = float(np.mean(dense))
    moes = [v for n, v in net.items() if moe[n]]
    coef[3] = float(np.mean(moes)) - coef[0] if moes and moe_term else 0.0
    return coef


def leave_one_model_out(rows: list[dict[str, str]], moe_term: bool = False
                        ) -> tuple[list[float], list[dict[str, object]]]:
    """Residuals ln(measured/estimated) of every row when its model is left out (its PPL rows
    too), and a summary per left-out model."""
    residuals: list[float] = []
    per_model = []
    for name in sorted({r["model"] for r in rows if r["kld_mean"]}):
        train = [r for r in rows if r["model"] != name]
        test = [r for r in rows if r["model"] == name and r["kld_mean"]]
        coef = fit(train, moe_term)
        x, y = _design(test)
        res = y - x @ coef
        residuals.extend(res.tolist())
        per_model.append({"model": name, "rows": len(test),
                          "median_abs_factor": round(float(np.exp(np.median(np.abs(res)))), 2),
                          "bias_factor": round(float(np.exp(np.mean(res))), 2)})
    return residuals, per_model


def fit_top1(rows: list[dict[str, str]]) -> tuple[float, float]:
    """ln(100 − top-1 agreement %) = g + h·ln(KLD) on the rows that give both."""
    both = [r for r in rows if r["top1_agree_pct"] and r["kld_mean"]]
    x = np.log([float(r["kld_mean"]) for r in both])
    y = np.log([100 - float(r["top1_agree_pct"]) for r in both])
    h, g = np.polyfit(x, y, 1)
    return float(g), float(h)


def build() -> dict[str, object]:
    """The content of quality.json."""
    all_rows = read_rows()
    rows = [r for r in all_rows if r["kld_mean"]]
    coef = fit(all_rows)
    residuals, per_model = leave_one_model_out(all_rows)
    lo, hi = np.percentile(residuals, RANGE_PERCENTILES)
    g, h = fit_top1(rows)
    with_moe, _ = leave_one_model_out(all_rows, moe_term=True)
    sources = sorted({r["source_url"] for r in all_rows})
    return {
        "_about": "Quality of a GGUF quantization: mean KL divergence from the 16-bit model "
                  "and top-token agreement, fitted by tools/fit_quality.py on "
                  "data/measured/quality_kld.csv (do not edit by hand).",
        "kld_terms": list(TERMS),
        "kld_coefficients": [round(float(c), 5) for c in coef],
        "legacy_types": sorted(LEGACY),
        "top1_disagreement": {"intercept": round(g, 5), "ln_kld": round(h, 5),
                              "rows": sum(1 for r in rows if r["top1_agree_pct"])},
        "leave_one_model_out": {
            "rows": len(residuals), "models": len(per_model),
            "median_abs_factor": round(float(np.exp(np.median(np.abs(residuals)))), 2),
            "range_percentiles": list(RANGE_PERCENTILES),
            "range_factors": [round(float(np.exp(lo)), 3), round(float(np.exp(hi)), 3)],
            "per_model": per_model},
        "dropped_terms": {"moe": {
            "why": "the two MoE models measured disagree by 25x at equal bits (LFM2-8B-A1B far "
                   "above the dense fit, Qwen3.5-35B-A3B below it): with the term the "
                   "leave-one-model-out error is larger, so its coefficient is 0",
            "leave_one_model_out_median_abs_factor_with_it":
                round(float(np.exp(np.median(np.abs(with_moe)))), 2)}},
        "fit_rows": len(rows),
        "data": "data/measured/quality_kld.csv",
        "sources": sources,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="fail if quality.json is stale")
    args = parser.parse_args()
    data = build()
    lomo = data["leave_one_model_out"]
    assert isinstance(lomo, dict)
    print("| model left out | rows | median error (×) | bias (×) |")
    print("|---|---:|---:|---:|")
    for m in lomo["per_model"]:
        print(f"| {m['model']} | {m['rows']} | {m['median_abs_factor']} | {m['bias_factor']} |")
    print(f"all: {lomo['rows']} rows, median ×{lomo['median_abs_factor']}, "
          f"range ×{lomo['range_factors'][0]}–×{lomo['range_factors'][1]}")
    print("coefficients:", dict(zip(TERMS, data["kld_coefficients"])))  # type: ignore[call-overload]
    text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    if args.check:
        if OUT.read_text(encoding="utf-8") != text:
            print(f"{OUT} is stale: run python tools/fit_quality.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
