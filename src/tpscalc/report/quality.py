"""The quality block of an estimate and of a report row: KLD and top-token agreement with their
ranges, plain words and what they rest on (tpscalc.estimate.quality)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tpscalc.estimate.quality_store import model_quality, quality_fit

if TYPE_CHECKING:
    from tpscalc.catalog.schema import Model
    from tpscalc.estimate.quality import Quality

BASIS_TEXT = {
    "fit": "estimated: ln(KLD) linear in bits per weight, model size, MoE, importance matrix "
           "and legacy type, fitted on {rows} published llama-perplexity --kl-divergence rows "
           "of {models} models; leave-one-model-out error ×{err} (range: 80 % of those misses)",
    "native": "lossless against the release: the lab published the weights in this format "
              "(or this file is at least as precise), so the release itself is the reference",
    "unquantized": "the unquantized weights",
}


def quality_json(model: Model, quant: str | None) -> dict[str, Any] | None:
    """`{kld, kld_low, kld_high, top1_agree_pct, ..., words, basis, source, sources}` (None: no
    quantization, or a file type the catalog cannot size)."""
    if not quant:
        return None
    q = model_quality(model, quant)
    if q is None:
        return None
    return block(q)


def block(q: Quality) -> dict[str, Any]:
    """The JSON form of one quality estimate."""
    fit = quality_fit()
    return {
        "kld": round(q.kld, 5), "kld_low": round(q.kld_low, 5), "kld_high": round(q.kld_high, 5),
        "top1_agree_pct": round(q.top1_agree_pct, 1), "top1_low_pct": round(q.top1_low_pct, 1),
        "top1_high_pct": round(q.top1_high_pct, 1),
        "words": q.words, "basis": q.basis,
        "source": BASIS_TEXT[q.basis].format(rows=fit.fit_rows, models=fit.models,
                                              err=fit.median_abs_factor),
        "sources": list(fit.sources) if q.basis == "fit" else [],
    }


def short_text(model: Model, quant: str | None, gettext: Any = None) -> str:
    """"KLD 0.03 · near-lossless" ("" when unknown); `gettext` translates the words."""
    if not quant:
        return ""
    q = model_quality(model, quant)
    if q is None:
        return ""
    words = gettext(q.words) if gettext else q.words
    if q.basis != "fit":
        return words
    return f"KLD {q.kld:.2g} · {words}"
