"""Which quantization a report row shows when the user asks for quality, speed, a balance, or a
decode speed to reach (`--prefer`, `--min-tps`): every allowed ladder rung is estimated on every
card (one vectorised engine call per rung), and estimate.fit.choose_by_preference picks among
those that fit, by the quality estimate (estimate.quality). Without either option the engine's
own choice (the least compressed that fits) stands untouched.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from tpscalc.estimate.fit import BALANCED_KLD, choose_by_preference
from tpscalc.estimate.quality_store import model_quality
from tpscalc.estimate.query import ABOVE_LADDER, Query, ladder_position
from tpscalc.estimate.types import Estimate

if TYPE_CHECKING:
    from tpscalc.catalog.schema import Model
    from tpscalc.estimate.query import Rig
    from tpscalc.report.common import Engine
    from tpscalc.report.request import Filters


def wanted(filters: Filters) -> bool:
    """True when the request asks for another choice than the seed's rule."""
    return filters.prefer is not None or filters.min_tps is not None


def rungs(query: Query) -> list[str]:
    """The ladder rungs the query's quality bounds allow, least compressed first."""
    from tpscalc.catalog.quants import ladder_names

    names = ladder_names()
    top = 0 if query.max_quality in (None, *ABOVE_LADDER) else ladder_position(query.max_quality)
    bottom = len(names) - 1 if query.min_quality is None else ladder_position(query.min_quality)
    return names[max(top, 0):bottom + 1]


def _pick(model: Model, candidates: Sequence[Estimate], filters: Filters) -> Estimate | None:
    """The candidate the preference picks (None: none fits)."""
    klds, speeds = [], []
    for e in candidates:
        q = model_quality(model, e.quant) if e.quant else None
        klds.append(q.kld if q is not None else float("inf"))
        speeds.append(e.decode.tokens_per_s if e.fits and e.decode else None)
    i = choose_by_preference(klds, speeds, filters.prefer, filters.min_tps)
    return candidates[i] if i >= 0 else None


def _walk(models: Sequence[Model], defaults: Sequence[Estimate], query: Query, filters: Filters,
          run: Callable[[list[int], Query], list[Estimate]]) -> list[Estimate]:
    """Each default estimate, or the rung the preference picks.

    Only rungs more compressed than the default's are tried (the default is the least
    compressed that fits: above it nothing does), rung by rung, each on the rows still open;
    with min_tps a row closes at the first rung that reaches it (the best quality that does),
    with "balanced" only near-lossless rungs are tried, with "quality" none. `run(indexes,
    query)` estimates the rows at `indexes` at `query`; models[i] is row i's model.
    """
    names = rungs(query)
    candidates: list[list[Estimate]] = [[e] for e in defaults]
    start = {i: names.index(e.quant) for i, e in enumerate(defaults)
             if e.fits and e.decode is not None and e.quant in names}
    if filters.prefer in (None, "quality") and filters.min_tps is None:
        names = []  # the least compressed that fits is the best quality: nothing to try
    for k, name in enumerate(names):
        open_rows = [i for i, j in start.items() if j < k and not _closed(candidates[i], filters)
                     and (filters.prefer != "balanced" or _kld(models[i], name) < BALANCED_KLD)]
        if not open_rows:
            continue
        for i, e in zip(open_rows, run(open_rows, _only(query, name)), strict=True):
            if e.fits and e.quant == name:
                candidates[i].append(e)
    return [_pick(m, c, filters) or c[0] for m, c in zip(models, candidates, strict=True)]


def _kld(model: Model, quant: str) -> float:
    """The estimated KLD of `model` at `quant` (infinite when it cannot be sized)."""
    q = model_quality(model, quant)
    return q.kld if q is not None else float("inf")


def _closed(candidates: Sequence[Estimate], filters: Filters) -> bool:
    """True when a row needs no more compressed rung: min_tps is reached and nothing but the
    best quality reaching it is wanted."""
    if filters.min_tps is None or filters.prefer not in (None, "quality"):
        return False
    return any(e.decode is not None and e.decode.tokens_per_s >= filters.min_tps
               for e in candidates)


def rechoose_on_rigs(model: Model, rigs: Sequence[Rig], query: Query,
                     estimates: Sequence[Estimate], engine: Engine,
                     filters: Filters) -> list[Estimate]:
    """`estimates` (model on each rig) with each row's quantization chosen by `filters`."""
    if not wanted(filters):
        return list(estimates)
    return _walk([model] * len(estimates), estimates, query, filters,
                 lambda rows, q: engine.estimate_on_rigs(model, [rigs[i] for i in rows], q))


def rechoose_models(models: Sequence[Model], rig: Rig, query: Query,
                    estimates: Sequence[Estimate], engine: Engine,
                    filters: Filters) -> list[Estimate]:
    """`estimates` (each model on `rig`) with each row's quantization chosen by `filters`."""
    if not wanted(filters):
        return list(estimates)
    return _walk(models, estimates, query, filters,
                 lambda rows, q: engine.estimate_models_on_rig([models[i] for i in rows], rig, q))


def rechoose_one(model: Model, estimate: Estimate, query: Query, filters: Filters,
                 run: Callable[[Query], Estimate]) -> Estimate:
    """One estimate with its quantization chosen by `filters`; `run` estimates at a query."""
    if not wanted(filters):
        return estimate
    return _walk([model], [estimate], query, filters, lambda rows, q: [run(q)])[0]


def _only(query: Query, quant: str) -> Query:
    """`query` with both quality bounds at `quant`: the engine's ladder is that one rung."""
    return replace(query, min_quality=quant, max_quality=quant)
