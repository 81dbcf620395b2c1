"""What a quantization costs in quality: the mean KL divergence of its next-token distribution from
the 16-bit model's, and how often both pick the same top token (llama.cpp's
`llama-perplexity --kl-divergence`: "Mean KLD", "Same top p").

The estimate is a fit (tools/fit_quality.py, on data/measured/quality_kld.csv):
    ln(KLD) = a + b·bpw + c·ln(parameters, billions) + d·MoE + e·imatrix + f·legacy
    100 − top-1 agreement % = exp(g) · KLD^h
with a range from the fit's leave-one-model-out residuals (the 10th to 90th percentile).
A file in the format the lab itself released (Gemma's QAT Q4_0, gpt-oss's MXFP4, an FP8
release read as Q8_0) or one at least as precise is lossless against that release: the
release *is* the model, so there is nothing to lose against it. Pure: no files read here
(quality_store.py loads the coefficients).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from tpscalc.catalog.frozen import FrozenValue
from tpscalc.estimate.types import UNQUANTIZED

Basis = Literal["fit", "native", "unquantized"]
# Plain words for a mean KLD, upper bounds (nats). The anchors, from llama.cpp's LLaMA 3 8B
# scoreboard (tools/perplexity/README.md): Q8_0 0.0014 and Q6_K 0.0055 (top token the same
# 96-98 % of the time), Q4_K_M 0.03 (92 %), Q3_K_M 0.10, Q2_K 0.33-0.45 (71 %), IQ1_S 2.25.
WORDS: tuple[tuple[float, str], ...] = (
    (0.01, "virtually lossless"),
    (0.05, "near-lossless"),
    (0.15, "slight loss"),
    (0.5, "noticeable"),
    (math.inf, "severe"),
)
LOSSLESS = "lossless"


@dataclass(frozen=True, eq=False, repr=False)  # eq, hash, repr: FrozenValue
class QualityFit(FrozenValue):
    """The fitted coefficients (quality.json) and their published error."""

    kld_coefficients: tuple[float, ...]  # intercept, bpw, ln_params_b, moe, imatrix, legacy
    legacy_types: frozenset[str]
    top1_intercept: float  # ln(100 − agreement %) at ln(KLD) = 0
    top1_ln_kld: float
    range_factors: tuple[float, float]  # KLD × these: the 10th and 90th percentile
    median_abs_factor: float  # leave-one-model-out, the typical miss (×)
    fit_rows: int
    models: int
    sources: tuple[str, ...]


def from_dict(data: Mapping[str, Any]) -> QualityFit:
    """The fit from quality.json's content."""
    lomo = data["leave_one_model_out"]
    top1 = data["top1_disagreement"]
    lo, hi = lomo["range_factors"]
    return QualityFit(kld_coefficients=tuple(float(c) for c in data["kld_coefficients"]),
                      legacy_types=frozenset(data["legacy_types"]),
                      top1_intercept=float(top1["intercept"]), top1_ln_kld=float(top1["ln_kld"]),
                      range_factors=(float(lo), float(hi)),
                      median_abs_factor=float(lomo["median_abs_factor"]),
                      fit_rows=int(data["fit_rows"]), models=int(lomo["models"]),
                      sources=tuple(data["sources"]))


@dataclass(frozen=True, eq=False, repr=False)  # eq, hash, repr: FrozenValue
class Quality(FrozenValue):
    """One quantization's quality: mean KLD (nats) and top-token agreement (%), with ranges."""

    quant: str
    kld: float
    kld_low: float
    kld_high: float
    top1_agree_pct: float
    top1_low_pct: float
    top1_high_pct: float
    words: str  # "near-lossless", ... (English; the renderers translate)
    basis: Basis  # "fit": estimated; "native": the lab's own format; "unquantized"


def kld_estimate(fit: QualityFit, bpw: float, params_b: float, *, moe: bool = False,
                 imatrix: bool = True, legacy: bool = False) -> float:
    """Mean KL divergence from the 16-bit model, nats, at `bpw` bits per weight."""
    a, b, c, d, e, f = fit.kld_coefficients
    ln_kld = (a + b * bpw + c * math.log(max(params_b, 0.01)) + d * moe + e * imatrix
              + f * legacy)
    return math.exp(ln_kld)


def top1_agree_pct(fit: QualityFit, kld: float) -> float:
    """How often the quantized and the 16-bit model choose the same top token, %."""
    if kld <= 0:
        return 100.0
    disagree = math.exp(fit.top1_intercept + fit.top1_ln_kld * math.log(kld))
    return max(0.0, 100.0 - disagree)


def words_for(kld: float) -> str:
    """The plain words for a mean KLD (WORDS)."""
    return next(w for bound, w in WORDS if kld < bound)


def lossless(quant: str, basis: Basis) -> Quality:
    """A file that loses nothing against its reference."""
    return Quality(quant=quant, kld=0.0, kld_low=0.0, kld_high=0.0, top1_agree_pct=100.0,
                   top1_low_pct=100.0, top1_high_pct=100.0, words=LOSSLESS, basis=basis)


def estimate_quality(fit: QualityFit, quant: str, bpw: float, params_b: float, *,
                     moe: bool = False, native_bpw: float | None = None) -> Quality:
    """The quality of `quant` (bpw bits a weight) for a model of params_b billion weights.

    native_bpw: the bits a weight of the format the lab released (None: a 16-bit release); a
    file at least that precise is lossless against the release. An importance matrix is
    assumed, as most published GGUFs use one (its term is small in the fit).
    """
    if quant.upper() in UNQUANTIZED:
        return lossless(quant, "unquantized")
    if native_bpw is not None and bpw >= native_bpw - 1e-6:
        return lossless(quant, "native")
    kld = kld_estimate(fit, bpw, params_b, moe=moe, legacy=quant.upper() in fit.legacy_types)
    lo, hi = kld * fit.range_factors[0], kld * fit.range_factors[1]
    return Quality(quant=quant, kld=kld, kld_low=lo, kld_high=hi,
                   top1_agree_pct=top1_agree_pct(fit, kld),
                   top1_low_pct=top1_agree_pct(fit, hi), top1_high_pct=top1_agree_pct(fit, lo),
                   words=words_for(kld), basis="fit")


def best_index(klds: Sequence[float], allowed: Sequence[bool]) -> int:
    """The index of the lowest KLD among the allowed entries (-1: none allowed); the first of
    equals, so a ladder ordered least compressed first keeps the larger file on a tie."""
    best = -1
    for i, (k, ok) in enumerate(zip(klds, allowed)):
        if ok and (best < 0 or k < klds[best]):
            best = i
    return best
