"""The model report (model → every card).

Built once as plain data, rendered by CLI, JSON and web.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from tpscalc.catalog import get_model, store
from tpscalc.catalog.schema import Card, Model
from tpscalc.catalog.search import filter_by_text
from tpscalc.estimate.query import (
    ABOVE_LADDER,
    EstimateInputError,
    Rig,
    model_context_limit,
    query_for_model,
)
from tpscalc.estimate.types import Estimate
from tpscalc.i18n import translator
from tpscalc.report import choice, common, faq, record
from tpscalc.report.common import Engine
from tpscalc.report.model_types import (
    ContextPoint,
    DepthPoint,
    KvPoint,
    ModelReport,
    ModelSummary,
    Row,
    ServingPoint,
)
from tpscalc.report.request import ReportRequest
from tpscalc.report.rigs import card_rig, card_rigs
from tpscalc.report.runtime_faq import fitting_runtimes

CURVE_CONTEXTS = (2048, 4096, 8192, 16384, 32768, 65536, 131072)  # tokens: the chart, the form
KV_CONTEXTS = (4096, 32768)  # the "KV cache at 4k vs 32k vs the model's maximum" explanation
FAQ_SIZES_GIB = (12, 16, 24)  # the seed pages' "can I run it on 12 / 16 / 24 GB?"
EXTREMES = 10  # the ten fastest, the ten smallest
# The speed-against-depth chart: cached tokens before the test, doubling from 4k up to the
# model's limit (at most 1M), each a llama-bench pp512 / tg128 run at -d depth.
DEPTH_START, DEPTH_TOP = 4096, 1_048_576
DEPTH_PROMPT, DEPTH_GEN = 512, 128


def summarize(
    model: Model, rows: Sequence[Row], request: ReportRequest, kv_points: Sequence[KvPoint] = ()
) -> ModelSummary:
    """Counts, headline cards, extremes and per-size answers over all `rows` (pure)."""
    by_speed = common.sort_by_speed(rows)
    fit = [r for r in by_speed if r.estimate.fits]
    small = common.smallest_first(rows)
    misses = [r for r in by_speed if not r.estimate.fits and r.estimate.short_by_gib is not None]
    reading = sum(1 for r in fit if r.tokens_per_s >= common.READING_SPEED_TOKENS_PER_S)
    ladder = {name: i for i, name in enumerate([*ABOVE_LADDER, *common.quant_names()])}
    used = {r.estimate.quant for r in fit if r.estimate.quant}
    quants = tuple(sorted(used, key=lambda q: (ladder.get(q, len(ladder)), q)))
    return ModelSummary(
        model=model,
        request=request,
        cards_total=len(rows),
        cards_fit=len(fit),
        fastest=fit[0] if fit and model.generates else None,  # no speed: no fastest card
        smallest=small[0] if small else None,
        median_tokens_per_s=common.median_tokens_per_s(fit) if model.generates else None,
        reading_speed_cards=reading,
        fastest_ten=tuple(fit[:EXTREMES]) if model.generates else (),
        smallest_cards=tuple(small[:EXTREMES]),
        closest_miss=misses[0] if misses else None,
        quant_levels=quants,
        by_size=tuple(_best_of_size(by_speed, size) for size in FAQ_SIZES_GIB),
        kv_points=tuple(kv_points),
    )


def _best_of_size(by_speed: Sequence[Row], size_gib: int) -> tuple[int, Row | None, Row | None]:
    """The fastest card of `size_gib` that fits, and the closest miss of that size."""
    same = [r for r in by_speed if abs(r.card.memory_gib - size_gib) < 0.5]
    best = next((r for r in same if r.estimate.fits), None)
    miss = next((r for r in same if not r.estimate.fits), None)
    return size_gib, best, miss


def filter_rows(rows: Sequence[Row], request: ReportRequest) -> list[Row]:
    """The rows the table shows: search, memory bounds, and only cards that fit.

    With show_all, the cards that do not fit too.
    """
    f = request.filters
    keep = {id(c) for c in filter_by_text([r.card for r in rows], f.search)}
    out = []
    for r in rows:
        if id(r.card) not in keep or not (f.show_all or r.estimate.fits):
            continue
        if f.min_memory_gib is not None and r.card.memory_gib < f.min_memory_gib:
            continue
        if f.max_memory_gib is not None and r.card.memory_gib > f.max_memory_gib:
            continue
        out.append(r)
    return common.sort_by_speed(out)


def build_model_report(
    model: Model,
    request: ReportRequest,
    *,
    cards: Sequence[Card] | None = None,
    engine: Engine | None = None,
) -> ModelReport:
    """The model report for `model` against every card (or `cards`), for a checked `request`."""
    return build_model_reports(model, request, [request.lang], cards=cards, engine=engine)[0]


def build_model_reports(
    model: Model,
    request: ReportRequest,
    languages: Sequence[str],
    *,
    cards: Sequence[Card] | None = None,
    engine: Engine | None = None,
) -> list[ModelReport]:
    """The model report in each of `languages`, estimating only once.

    The figures do not depend on the language, only the texts do: the static export uses this
    to write the three languages of a page for the price of one estimate."""
    eng = engine or common.default_engine()
    request = replace(request, query=query_for_model(model, request.query))
    cards = list(store.cards() if cards is None else cards)
    rigs = card_rigs(cards, request.rig)
    estimates = choice.rechoose_on_rigs(model, rigs, request.query,
                                        eng.estimate_on_rigs(model, rigs, request.query), eng,
                                        request.filters)
    rows = [Row(c, e) for c, e in zip(cards, estimates, strict=True)]
    summary = _with_kv_points(summarize(model, rows, replace(request, lang=languages[0])), eng)
    summary = _with_runtimes(summary, eng)
    curve = context_curve(summary, rows, eng)
    depths = tuple(depth_curve(summary, rows, eng))
    serving = _serving_curve(summary)
    return [replace(assemble(replace(summary, request=replace(request, lang=lang)), rows, curve),
                    depth_curve=depths, serving_curve=serving)
            for lang in languages]


def _with_runtimes(summary: ModelSummary, eng: Engine) -> ModelSummary:
    """`summary` with the fastest card's runtime comparison (the FAQ's "which runtime")."""
    fast = summary.fastest
    if fast is None or fast.estimate.quant is None:
        return summary
    query = replace(summary.request.query, context=fast.estimate.context)
    return replace(summary, runtimes=fitting_runtimes(
        eng, summary.model, card_rig(fast.card, summary.request.rig), query))


SERVING_COUNTS = (1, 2, 4, 8, 16, 32, 64, 128, 256)  # users at once on the serving chart


def _serving_curve(summary: ModelSummary) -> tuple[ServingPoint, ...]:
    """Aggregate and per-user speed of 1 to 256 users on the fastest card, while they fit
    (estimate/serving.py); none on a rig or for a model that writes no text."""
    from tpscalc.estimate.serving import serving_curve

    fast = summary.fastest
    if fast is None or not summary.request.rig.is_default or fast.estimate.quant is None:
        return ()
    rig = card_rig(fast.card, summary.request.rig)
    return tuple(ServingPoint(fast.card.name, n, fast.estimate.quant, d.aggregate_tokens_per_s,
                              d.per_user_tokens_per_s)
                 for n, d in serving_curve(summary.model, rig, summary.request.query,
                                           SERVING_COUNTS, fast.estimate.quant))


def model_report(name: str, request: ReportRequest) -> ModelReport:
    """The model report for a model name as people type it (NameNotFoundError when unknown)."""
    return build_model_report(get_model(name), request)


def assemble(
    summary: ModelSummary, rows: Sequence[Row], curve: Sequence[ContextPoint] = ()
) -> ModelReport:
    """The report from its computed figures (pure: texts are derived, nothing is estimated)."""
    tr = translator(summary.request.lang)
    return ModelReport(
        summary=summary,
        rows=tuple(filter_rows(rows, summary.request)),
        context_curve=tuple(curve),
        record=record.sections(summary.model, tr.gettext, summary.request.lang),
        explanations=faq.explanations(summary),
        guide=faq.guide(summary),
        faq=faq.model_faq(summary),
        notes=faq.notes(summary),
    )


def _reference_quant(summary: ModelSummary) -> str | None:
    """The quantization the memory explanations use: the fastest card's, else the smallest's."""
    for row in (summary.fastest, summary.smallest, summary.closest_miss):
        if row is not None and row.estimate.quant:
            return row.estimate.quant
    return None


def _with_kv_points(summary: ModelSummary, eng: Engine) -> ModelSummary:
    """`summary` plus the memory needed at 4k, 32k and the model's maximum context."""
    quant = _reference_quant(summary)
    if quant is None:
        return summary
    arch = summary.model.architecture
    contexts = list(KV_CONTEXTS)
    if arch and arch.max_context:
        contexts = [c for c in contexts if c < arch.max_context] + [arch.max_context]
    points = []
    for ctx in sorted(set(contexts)):
        try:
            at = replace(summary.request.query, context=ctx, backend=None)  # overhead as on CUDA
            points.append(KvPoint(ctx, quant, eng.memory_at(summary.model, quant, at)))
        except EstimateInputError:
            continue
    return replace(summary, kv_points=tuple(points))


def curve_contexts(model: Model) -> list[int]:
    """Context lengths for the memory/speed chart, up to the model's maximum (tokens)."""
    arch = model.architecture
    top = arch.max_context if arch and arch.max_context else 32768
    out = [c for c in CURVE_CONTEXTS if c <= top]
    if top not in out and top <= 1_048_576:
        out.append(top)
    return out


def context_curve(summary: ModelSummary, rows: Sequence[Row], eng: Engine) -> list[ContextPoint]:
    """Memory and speed of the fastest and the typical (median-speed) card per context length."""
    if summary.fastest is None:
        return []
    cards: list[tuple[str, Card]] = [("fastest", summary.fastest.card)]
    typical = _median_row(summary, rows)
    if typical is not None and typical.card is not summary.fastest.card:
        cards.append(("typical", typical.card))
    query = summary.request.query
    out = []
    for role, card in cards:
        for ctx in curve_contexts(summary.model):
            try:
                e: Estimate = eng.estimate(summary.model, Rig.of(card), replace(query, context=ctx))
            except EstimateInputError:
                continue
            out.append(
                ContextPoint(
                    role,
                    card.name,
                    ctx,
                    e.quant,
                    e.memory.total_gib,
                    e.memory.kv_cache_gib,
                    e.decode.tokens_per_s if e.decode else None,
                    e.fits,
                )
            )
    return out


def curve_depths(model: Model) -> list[int]:
    """Depths (cached tokens) for the speed-against-depth chart: 0, 4k, 8k, … up to the
    model's context limit (32k when its source gives none)."""
    limit = model_context_limit(model) or 32768
    out, depth = [0], DEPTH_START
    while depth <= min(limit, DEPTH_TOP):
        out.append(depth)
        depth *= 2
    return out


def depth_cards(summary: ModelSummary, rows: Sequence[Row]) -> list[tuple[str, Row]]:
    """The cards the depth chart follows: the fastest, the typical (median-speed) one and the
    fastest Apple one, each once, among the cards that fit."""
    if summary.fastest is None:
        return []
    # the fastest Apple card that fits: the first of the Apple rows sorted alone (a stable
    # sort keeps their order among the rest's)
    apple = common.sort_by_speed([r for r in rows
                                  if r.estimate.fits and r.card.vendor == "Apple"])
    picks = [("fastest", summary.fastest), ("typical", _median_row(summary, rows)),
             ("apple", apple[0] if apple else None)]
    out: list[tuple[str, Row]] = []
    for role, row in picks:
        if row is not None and all(row.card is not r.card for _, r in out):
            out.append((role, row))
    return out


def depth_curve(summary: ModelSummary, rows: Sequence[Row], eng: Engine) -> list[DepthPoint]:
    """Decode and prefill speed against depth for a few representative cards, each at the
    quantization it runs the model at on the page (llama-bench pp512 / tg128 at -d depth)."""
    base = summary.request.query
    out = []
    for role, row in depth_cards(summary, rows):
        for depth in curve_depths(summary.model):
            query = replace(base, context=depth + DEPTH_PROMPT + DEPTH_GEN, depth=depth,
                            n_prompt=DEPTH_PROMPT, n_gen=DEPTH_GEN)
            try:
                e = eng.estimate(summary.model, card_rig(row.card, summary.request.rig), query,
                                 row.estimate.quant, placed=False)
            except EstimateInputError:
                continue
            out.append(DepthPoint(
                role, row.card.name, row.card.slug, depth, e.quant,
                e.decode.tokens_per_s if e.decode else None,
                e.prefill.tokens_per_s if e.prefill else None, e.fits))
    return out


def _median_row(summary: ModelSummary, rows: Sequence[Row]) -> Row | None:
    """The card whose speed is closest to the median over the cards that fit."""
    median = summary.median_tokens_per_s
    candidates = [r for r in rows if r.estimate.fits]
    if median is None or not candidates:
        return None
    return min(candidates, key=lambda r: abs(r.tokens_per_s - median))
