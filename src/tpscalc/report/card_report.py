"""The card report (card → every model): built once as plain data, rendered by CLI, JSON and web."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from tpscalc.catalog import get_card, store
from tpscalc.catalog.schema import Card, Model
from tpscalc.catalog.search import filter_by_text
from tpscalc.estimate.query import DEFAULT_CONTEXT, Query, context_within_limit
from tpscalc.estimate.types import Estimate
from tpscalc.i18n import format_number, translator
from tpscalc.report import choice, common
from tpscalc.report.common import Engine, params_text
from tpscalc.report.request import ReportRequest
from tpscalc.report.rigs import card_rig
from tpscalc.report.runtime_faq import fitting_runtimes, runtime_faq
from tpscalc.report.types import CardReport, ModelRow, Text


def _date_key(date: str | None) -> str:
    return date or ""


def sort_rows(rows: Sequence[ModelRow], sort: str) -> list[ModelRow]:
    """Fitting models by `sort` (speed, size or date; newest first on ties), then the models left
    out for their shorter context limit, then the misses."""
    fit = [r for r in rows if r.counts]
    if sort == "speed":
        fit.sort(key=lambda r: (r.tokens_per_s, _date_key(r.model.publication_date)), reverse=True)
    elif sort == "size":
        fit.sort(key=lambda r: (r.model.parameters_total, _date_key(r.model.publication_date)),
                 reverse=True)
    else:
        fit.sort(key=lambda r: (_date_key(r.model.publication_date), r.tokens_per_s), reverse=True)
    beyond = [r for r in rows if r.estimate.fits and r.left_out]
    miss = sorted((r for r in rows if not r.estimate.fits),
                  key=lambda r: (r.estimate.short_by_gib or 0.0, r.model.name))
    return fit + beyond + miss


def build_card_report(card: Card, request: ReportRequest, *, models: Sequence[Model] | None = None,
                      engine: Engine | None = None) -> CardReport:
    """The card report for `card` against every model (or `models`), for a checked `request`."""
    return build_card_reports(card, request, [request.lang], models=models, engine=engine)[0]


def build_card_reports(
    card: Card,
    request: ReportRequest,
    languages: Sequence[str],
    *,
    models: Sequence[Model] | None = None,
    engine: Engine | None = None,
) -> list[CardReport]:
    """The card report in each of `languages`, estimating only once.

    Only the texts depend on the language (the static export writes three pages per estimate)."""
    eng = engine or common.default_engine()
    models = list(store.models() if models is None else models)
    rig, query = card_rig(card, request.rig), request.query
    # A model is never evaluated past its own context limit: those with a shorter one are
    # evaluated at it, one vectorised call per distinct context.
    groups: dict[int, list[int]] = {}
    for i, m in enumerate(models):
        groups.setdefault(context_within_limit(m, query), []).append(i)
    found: dict[int, ModelRow] = {}
    strict = query.context != DEFAULT_CONTEXT  # the default is lowered, as on a model page
    for context, indexes in groups.items():
        at = query if context == query.context else replace(query, context=context)
        some = [models[i] for i in indexes]
        capped = context < query.context
        chosen = choice.rechoose_models(some, rig, at, eng.estimate_models_on_rig(some, rig, at),
                                        eng, request.filters)
        for i, m, e in zip(indexes, some, chosen, strict=True):
            found[i] = ModelRow(m, e, context if capped else None, capped and strict)
    rows = [found[i] for i in range(len(models))]
    if request.serving.users_at is not None and rig.is_single_card:
        rows = _with_users(card, rows, query, request.serving.users_at)
    big = _biggest(rows)
    runtimes = () if big is None or big.estimate.quant is None else fitting_runtimes(
        eng, big.model, rig, replace(query, context=big.estimate.context))
    return [assemble_card_report(card, rows, replace(request, lang=lang), runtimes)
            for lang in languages]


def _biggest(rows: Sequence[ModelRow]) -> ModelRow | None:
    """The model with the most parameters among those that fit."""
    return max((r for r in rows if r.counts), key=lambda r: r.model.parameters_total,
               default=None)


def _with_users(card: Card, rows: Sequence[ModelRow], query: Query, target: float
                ) -> list[ModelRow]:
    """`rows` with the most users each model serves on `card` at `target` tok/s each (the
    card page's users column, asked with users_at)."""
    from tpscalc.estimate.serving import users_at_estimate

    out = []
    for r in rows:
        at = query if r.estimate.context == query.context else replace(
            query, context=r.estimate.context)
        users = users_at_estimate(r.model, card, at, r.estimate, target)[0] if r.counts else 0
        out.append(replace(r, users=users))
    return out


def card_report(name: str, request: ReportRequest) -> CardReport:
    """The card report for a card name as people type it (NameNotFoundError when unknown)."""
    return build_card_report(get_card(name), request)


def assemble_card_report(
    card: Card, rows: Sequence[ModelRow], request: ReportRequest,
    runtimes: tuple[Estimate, ...] = (),
) -> CardReport:
    """The card report from its evaluated rows and the biggest model's runtime comparison
    (fitting_runtimes; pure)."""
    f = request.filters
    fit = [r for r in rows if r.counts]
    biggest = _biggest(rows)
    fastest = max((r for r in fit if r.estimate.decode), key=lambda r: r.tokens_per_s,
                  default=None)
    reading = sum(1 for r in fit if r.tokens_per_s >= common.READING_SPEED_TOKENS_PER_S)
    keep = {id(m) for m in filter_by_text([r.model for r in rows], f.search)}
    shown = [r for r in rows if id(r.model) in keep and (f.show_all or r.counts)]
    beyond = sum(1 for r in rows if r.left_out)
    report = CardReport(
        card=card,
        request=request,
        models_total=len(rows),
        models_fit=len(fit),
        reading_speed_models=reading,
        biggest=biggest,
        fastest=fastest,
        rows=tuple(sort_rows(shown, f.sort)),
        faq=(),
        notes=(),
        models_beyond_limit=beyond,
        runtimes=runtimes,
    )
    return replace(report, faq=card_faq(report), notes=_notes(request, beyond))


def _notes(request: ReportRequest, beyond: int) -> tuple[str, ...]:
    lang = request.lang
    tr = translator(lang)
    limits = (tr.ngettext(
        "{n} model holds less than {context} tokens of context and is left out; show all to see "
        "it at its own limit.",
        "{n} models hold less than {context} tokens of context and are left out; show all to see "
        "them at their own limit.", beyond).format(
            n=format_number(beyond, lang), context=format_number(request.query.context, lang)),
    ) if beyond else ()
    return limits + (
        tr.gettext(
            "Speeds are estimates for a single request (one conversation at a time), computed from "
            "memory bandwidth, model size and quantization; real speed varies with the inference "
            "software and its version. Vendors' published figures measure many simultaneous "
            "requests and are much higher."
        ),
        tr.gettext("Memory in GiB (2^30 bytes), bandwidth in GB/s (10^9 bytes/s)."),
    )


def card_faq(report: CardReport) -> tuple[Text, ...]:
    """Questions about the card, answered from the report's figures."""
    lang, card = report.request.lang, report.card
    tr = translator(lang)
    q = [  # literal gettext calls: extraction finds them (a loop over a tuple hid them)
        tr.gettext("{card}: how many models can it run?").format(card=card.name),
        tr.gettext("{card}: what is the biggest model it runs?").format(card=card.name),
        tr.gettext("{card}: how fast does it generate text?").format(card=card.name),
    ]
    count = tr.gettext(
        "{fit} of the {total} open-weight language models we track fit entirely in its {memory} "
        "GiB at a context of {context} tokens."
    ).format(
        fit=report.models_fit,
        total=report.models_total,
        memory=format_number(card.memory_gib, lang),
        context=format_number(report.request.query.context, lang),
    )
    b, f = report.biggest, report.fastest
    if b is None or f is None:
        none = tr.gettext("None of the models we track fits entirely on it.")
        return (Text(q[0], count), Text(q[1], none), Text(q[2], none))
    biggest = tr.gettext(
        "{model}, with {params} parameters, at {quant}, using about {needs} GiB and generating "
        "about {tps} tokens per second."
    ).format(
        model=b.model.name,
        params=params_text(b.model.parameters_total, lang),
        quant=b.estimate.quant or "—",
        needs=common.gib(b.estimate.memory.total_gib, lang),
        tps=common.sig(b.tokens_per_s, lang),
    )
    fast = tr.gettext(
        "Generation is limited by its memory bandwidth of {bandwidth} GB/s: the fastest model it "
        "runs is {model} at about {tps} tokens per second, and {count} models reach reading "
        "speed (about 10 tokens per second)."
    ).format(
        bandwidth=format_number(card.bandwidth_gb_s, lang),
        model=f.model.name,
        tps=common.sig(f.tokens_per_s, lang),
        count=report.reading_speed_models,
    )
    return (Text(q[0], count), Text(q[1], biggest), Text(q[2], fast),
            *runtime_faq(b.model.name, report.runtimes, lang), *_bigger_or_better(report))


def _bigger_or_better(report: CardReport) -> tuple[Text, ...]:
    """ "A bigger model compressed more, or a smaller one compressed less?": what the quality
    data say about the biggest model it runs, and that they cannot rank two models."""
    from tpscalc.report.quality import kld_text, quality_json

    b, lang = report.biggest, report.request.lang
    q = quality_json(b.model, b.estimate.quant) if b is not None else None
    if b is None or q is None:
        return ()
    tr = translator(lang)
    question = tr.gettext("{card}: a bigger model compressed more, or a smaller one compressed "
                          "less?").format(card=report.card.name)
    answer = tr.gettext(
        "Its biggest, {model}, runs at {quant}: a KL divergence of about {kld} from its own "
        "16-bit weights ({words}). A KL divergence compares a file only with its own model, so "
        "it cannot tell whether that beats a smaller model at a higher quantization; the quality "
        "data here hold no task scores that compare two models.").format(
            model=b.model.name, quant=b.estimate.quant, kld=kld_text(q["kld"], lang),
            words=tr.gettext(q["words"]))
    if q["kld"] < BIGGER_STILL_NEAR_KLD:
        answer += " " + tr.gettext("What it does say: this compression costs little, so the "
                                   "bigger model keeps most of what its size gives it.")
    else:
        answer += " " + tr.gettext("What it does say: this compression is no longer small, so a "
                                   "smaller model at a higher quantization may do as well; only "
                                   "a task benchmark can tell.")
    return (Text(question, answer),)


BIGGER_STILL_NEAR_KLD = 0.05  # near-lossless (estimate.quality.WORDS)
