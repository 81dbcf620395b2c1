"""The FAQ's "which runtime is fastest here" (issue 25): one model on one card (or the page's
rig) under every runtime that runs it, from the engine's runtime comparison."""
from __future__ import annotations

from collections.abc import Sequence

from tpscalc.catalog.schema import Model
from tpscalc.estimate.query import Query, Rig
from tpscalc.estimate.runtimes import get_runtime
from tpscalc.estimate.types import Estimate
from tpscalc.i18n import format_number, translator
from tpscalc.report.common import Engine, sig
from tpscalc.report.types import Text


def fitting_runtimes(engine: Engine, model: Model, rig: Rig, query: Query
                     ) -> tuple[Estimate, ...]:
    """The runtimes that hold `model` on `rig` at the query's context, fastest decode first
    (each at the format it takes by default)."""
    return tuple(e for e in engine.compare_runtimes(model, rig, query)
                 if e.fits and e.decode is not None)


def runtime_faq(model: str, runtimes: Sequence[Estimate], lang: str) -> tuple[Text, ...]:
    """The question and its answer from `runtimes` (fitting_runtimes); () when fewer than two
    runtimes run the pair: there is nothing to choose."""
    if len(runtimes) < 2:
        return ()
    tr = translator(lang)
    first = runtimes[0]
    ranked = "; ".join(tr.gettext("{runtime} {tps} tok/s at {quant}").format(
        runtime=get_runtime(e.runtime).label, tps=sig(e.decode.tokens_per_s if e.decode else 0.0,
                                                      lang), quant=e.quant or "—")
        for e in runtimes)
    question = tr.gettext("{model}: which runtime runs it fastest on the {card}?").format(
        model=model, card=first.gpu)
    answer = tr.gettext(
        "{runtime}, by our estimates at a context of {context} tokens, one request at a time: "
        "{ranked}. Each runtime is at the format it takes by default, and its speed is "
        "llama.cpp's estimate times the level fitted on public runs of that runtime (README: "
        "accuracy per runtime); choose a runtime (the page's runtime control, --runtime) to see "
        "every figure for it."
    ).format(runtime=get_runtime(first.runtime).label, ranked=ranked,
             context=format_number(first.context, lang))
    return (Text(question, answer),)
