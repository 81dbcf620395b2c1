"""The card report (card → every model): built once as plain data, rendered by CLI, JSON and web."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from tpscalc.catalog.schema import Card, Model
from tpscalc.estimate.engine import DEFAULT_CONTEXT
from tpscalc.estimate.types import Estimate
from tpscalc.report import common
from tpscalc.report.faq import params_text
from tpscalc.report.model_report import Text

SORTS = ("speed", "size", "date")


@dataclass(frozen=True)
class CardOptions:
    """What the user asked for."""

    context: int = DEFAULT_CONTEXT
    min_quality: str | None = None
    search: str | None = None
    sort: str = "size"  # largest model first: what a card owner asks first
    show_all: bool = False
    backend: str | None = None
    lang: str = "en"


@dataclass(frozen=True)
class ModelRow:
    """One model evaluated on the card."""

    model: Model
    estimate: Estimate

    @property
    def tokens_per_s(self) -> float:
        """Estimated decode speed, tokens/s (0 when it does not fit)."""
        return common.fitting_tokens_per_s(self.estimate)


@dataclass(frozen=True)
class CardReport:
    """Everything the card page shows, in one language."""

    card: Card
    options: CardOptions
    models_total: int
    models_fit: int
    reading_speed_models: int
    biggest: ModelRow | None  # most parameters among the models that fit
    fastest: ModelRow | None
    rows: tuple[ModelRow, ...]
    faq: tuple[Text, ...]
    notes: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """The whole report as JSON-ready data."""
        from tpscalc.report.serialize import card_report_json

        return card_report_json(self)


def _date_key(date: str | None) -> str:
    return date or ""


def sort_rows(rows: Sequence[ModelRow], sort: str) -> list[ModelRow]:
    """Fitting models by `sort` (speed, size or date; newest first on ties), then the misses."""
    fit = [r for r in rows if r.estimate.fits]
    if sort == "speed":
        fit.sort(key=lambda r: (r.tokens_per_s, _date_key(r.model.publication_date)), reverse=True)
    elif sort == "size":
        fit.sort(key=lambda r: (r.model.parameters_total, _date_key(r.model.publication_date)),
                 reverse=True)
    else:
        fit.sort(key=lambda r: (_date_key(r.model.publication_date), r.tokens_per_s), reverse=True)
    miss = sorted((r for r in rows if not r.estimate.fits),
                  key=lambda r: (r.estimate.short_by_gib or 0.0, r.model.name))
    return fit + miss


def check_card_options(options: CardOptions) -> CardOptions:
    """`options` with the quantization spelled canonically, or an input error."""
    floor = common.check_inputs(options.lang, options.context, options.min_quality)
    if options.sort not in SORTS:
        raise common.ReportInputError(
            f"unknown sort {options.sort!r}; use one of {', '.join(SORTS)}")
    return replace(options, min_quality=floor)


def build_card_report(card: str | Card, *, models: Sequence[Model] | None = None,
                      **opts: Any) -> CardReport:
    """The card report for `card` against every model (or `models`); see CardOptions for `opts`."""
    from tpscalc.catalog import get_card, store

    options = check_card_options(CardOptions(**opts))
    if isinstance(card, str):
        card = get_card(card)
    models = list(store.models() if models is None else models)
    estimates = common.engine().estimate_models_on_card(
        models, card, context=options.context, min_quality=options.min_quality,
        backend=options.backend)
    rows = [ModelRow(m, e) for m, e in zip(models, estimates, strict=True)]
    return assemble_card_report(card, rows, options)


def assemble_card_report(card: Card, rows: Sequence[ModelRow], options: CardOptions) -> CardReport:
    """The card report from its evaluated rows (pure)."""
    from tpscalc.catalog.search import filter_by_text

    fit = [r for r in rows if r.estimate.fits]
    biggest = max(fit, key=lambda r: r.model.parameters_total, default=None)
    fastest = max(fit, key=lambda r: r.tokens_per_s, default=None)
    reading = sum(1 for r in fit if r.tokens_per_s >= common.READING_SPEED_TOKENS_PER_S)
    keep = {id(m) for m in filter_by_text([r.model for r in rows], options.search)}
    shown = [r for r in rows if id(r.model) in keep and (options.show_all or r.estimate.fits)]
    report = CardReport(card=card, options=options, models_total=len(rows), models_fit=len(fit),
                        reading_speed_models=reading, biggest=biggest, fastest=fastest,
                        rows=tuple(sort_rows(shown, options.sort)), faq=(), notes=())
    return replace(report, faq=card_faq(report), notes=_notes(options.lang))


def _notes(lang: str) -> tuple[str, ...]:
    from tpscalc.i18n import translator

    tr = translator(lang)
    return (tr.gettext(
        "Speeds are estimates for a single request (one conversation at a time), computed from "
        "memory bandwidth, model size and quantization; real speed varies with the inference "
        "software and its version. Vendors' published figures measure many simultaneous "
        "requests and are much higher."),
        tr.gettext("Memory in GiB (2^30 bytes), bandwidth in GB/s (10^9 bytes/s)."))


def card_faq(report: CardReport) -> tuple[Text, ...]:
    """Questions about the card, answered from the report's figures."""
    from tpscalc.i18n import format_number, translator

    lang, card = report.options.lang, report.card
    tr = translator(lang)
    q = [tr.gettext(t).format(card=card.name) for t in (
        "{card}: how many models can it run?", "{card}: what is the biggest model it runs?",
        "{card}: how fast does it generate text?")]
    count = tr.gettext(
        "{fit} of the {total} open-weight language models we track fit entirely in its {memory} "
        "GiB at a context of {context} tokens.").format(
        fit=report.models_fit, total=report.models_total,
        memory=format_number(card.memory_gib, lang), context=format_number(report.options.context, lang))
    b, f = report.biggest, report.fastest
    if b is None or f is None:
        none = tr.gettext("None of the models we track fits entirely on it.")
        return (Text(q[0], count), Text(q[1], none), Text(q[2], none))
    biggest = tr.gettext(
        "{model}, with {params} parameters, at {quant}, using about {needs} GiB and generating "
        "about {tps} tokens per second.").format(
        model=b.model.name, params=params_text(b.model.parameters_total),
        quant=b.estimate.quant or "—", needs=common.gib(b.estimate.memory.total_gib, lang),
        tps=common.sig(b.tokens_per_s, lang))
    fast = tr.gettext(
        "Generation is limited by its memory bandwidth of {bandwidth} GB/s: the fastest model it "
        "runs is {model} at about {tps} tokens per second, and {count} models reach reading "
        "speed (about 10 tokens per second).").format(
        bandwidth=format_number(card.bandwidth_gb_s, lang), model=f.model.name,
        tps=common.sig(f.tokens_per_s, lang), count=report.reading_speed_models)
    return (Text(q[0], count), Text(q[1], biggest), Text(q[2], fast))
