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

from tpscalc.estimate.fit import choose_by_preference
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


def _candidates(default: Estimate, forced: Sequence[Estimate]) -> list[Estimate]:
    """The engine's own choice (it may be a native format off the ladder) and each rung's."""
    seen = {default.quant}
    out = [default]
    for e in forced:
        if e.fits and e.quant not in seen:
            seen.add(e.quant)
            out.append(e)
    return out


def rechoose_on_rigs(model: Model, rigs: Sequence[Rig], query: Query,
                     estimates: Sequence[Estimate], engine: Engine,
                     filters: Filters) -> list[Estimate]:
    """`estimates` (model on each rig) with each row's quantization chosen by `filters`."""
    if not wanted(filters):
        return list(estimates)
    per_rung = [engine.estimate_on_rigs(model, rigs, _only(query, q)) for q in rungs(query)]
    return [_pick(model, _candidates(e, [r[i] for r in per_rung]), filters) or e
            for i, e in enumerate(estimates)]


def rechoose_models(models: Sequence[Model], rig: Rig, query: Query,
                    estimates: Sequence[Estimate], engine: Engine,
                    filters: Filters) -> list[Estimate]:
    """`estimates` (each model on `rig`) with each row's quantization chosen by `filters`."""
    if not wanted(filters):
        return list(estimates)
    per_rung = [engine.estimate_models_on_rig(models, rig, _only(query, q)) for q in rungs(query)]
    return [_pick(m, _candidates(e, [r[i] for r in per_rung]), filters) or e
            for i, (m, e) in enumerate(zip(models, estimates, strict=True))]


def rechoose_one(model: Model, estimate: Estimate, query: Query, filters: Filters,
                 run: Callable[[Query], Estimate]) -> Estimate:
    """One estimate with its quantization chosen by `filters`; `run` estimates at a query."""
    if not wanted(filters):
        return estimate
    forced = [run(_only(query, q)) for q in rungs(query)]
    return _pick(model, _candidates(estimate, forced), filters) or estimate


def _only(query: Query, quant: str) -> Query:
    """`query` with both quality bounds at `quant`: the engine's ladder is that one rung."""
    return replace(query, min_quality=quant, max_quality=quant)
