"""The quality block of an estimate and of a report row: KLD and top-token agreement with their
ranges, plain words and what they rest on (tpscalc.estimate.quality)."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from tpscalc.estimate.quality_store import model_quality, quality_fit
from tpscalc.report.common import N_

if TYPE_CHECKING:
    from tpscalc.catalog.schema import Model
    from tpscalc.estimate.quality import Quality

# estimate.quality.WORDS and LOSSLESS as messages, so the catalogs translate them
WORD_MESSAGES = (N_("lossless"), N_("virtually lossless"), N_("near-lossless"),
                 N_("slight loss"), N_("noticeable"), N_("severe"))

BASIS_TEXT = {
    "fit": "estimated: ln(KLD) linear in bits per weight, with terms for model size, importance "
           "matrix and legacy type, fitted on {rows} published llama-perplexity --kl-divergence "
           "rows of {models} models; leave-one-model-out error ×{err} (range: 80 % of those "
           "misses)",
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


def short_text(model: Model, quant: str | None, gettext: Any = None, lang: str = "en") -> str:
    """"KLD 0.03 · near-lossless" ("" when unknown); `gettext` translates the words, `lang`
    writes the number."""
    if not quant:
        return ""
    q = model_quality(model, quant)
    if q is None:
        return ""
    words = gettext(q.words) if gettext else q.words
    if q.basis != "fit":
        return words
    return f"KLD {kld_text(q.kld, lang)} · {words}"


def kld_text(kld: float, lang: str = "en") -> str:
    """A KLD to two significant figures in the locale's style ("0.026", "0,026")."""
    from tpscalc.i18n import format_number

    if kld <= 0:
        return "0"
    digits = max(0, 1 - math.floor(math.log10(kld)))
    return format_number(round(kld, digits), lang, digits)


def quality_words(q: dict[str, Any] | None, lang: str, gettext: Any) -> str:
    """A quality block (quality_json) as "KLD 0.026 · near-lossless" in `lang` ("" without)."""
    if not q:
        return ""
    words = gettext(q["words"])
    return words if q["basis"] != "fit" else f"KLD {kld_text(q['kld'], lang)} · {words}"
