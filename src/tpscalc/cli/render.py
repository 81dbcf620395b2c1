"""Terminal rendering of the model and card reports (the same objects the JSON renders): rich
for the text, the plain renderer (plain_table.py) for the result tables."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.console import Console, Group

from tpscalc.catalog.schema import Model
from tpscalc.cli import plain_table
from tpscalc.cli.console import stdout_console
from tpscalc.cli.plain_table import Cell, Justify
from tpscalc.estimate.types import Estimate
from tpscalc.i18n import format_number, format_release, translator
from tpscalc.report.common import FIT_LABELS, gib, params_text, sig
from tpscalc.report.model_types import ModelReport, Row
from tpscalc.report.types import CardReport, ModelRow, Text

FIT_STYLE = {"comfortable": "green", "tight": "yellow", "no": "red"}
Column = tuple[str, Justify]  # a table column: translated header, alignment


def speed_cells(estimate: Estimate, lang: str) -> list[str]:
    """Speed, range and confidence cells: "226", "136–361", "low" (dashes when it does not fit)."""
    tr = translator(lang)
    d = estimate.decode
    if d is None or not estimate.fits:
        return ["—", "—", "—"]
    speed = sig(d.tokens_per_s, lang)
    if d.measured is not None:
        speed += " " + tr.gettext("(measured {tps})").format(tps=sig(d.measured, lang))
    return [speed, f"{sig(d.low, lang)}–{sig(d.high, lang)}", tr.gettext(d.confidence)]


def fit_cell(estimate: Estimate, lang: str) -> Cell:
    """The fit label ("Comfortable", "Tight", or "Short by 2.6 GiB"), coloured."""
    tr = translator(lang)
    fit, short = estimate.fit, estimate.short_by_gib
    if fit == "no":
        label = (tr.gettext("Short by {short} GiB").format(short=gib(short, lang))
                 if short is not None else tr.gettext("Does not fit"))
    else:
        label = tr.gettext(FIT_LABELS.get(fit, fit))
    return Cell(label, FIT_STYLE.get(fit, ""))


def quality_text(model: Model, quant: str | None, lang: str) -> str:
    """"KLD 0.026 · near-lossless" in `lang` ("" when unknown)."""
    from tpscalc.report.quality import short_text

    return short_text(model, quant, translator(lang).gettext, lang)


def model_table(report: ModelReport, wide: bool = False) -> ResultsTable:
    """The table of cards, fastest first (compact unless `wide`: speed, card, memory, needs,
    quantization, fit)."""
    lang = report.summary.request.lang
    tr = translator(lang)
    title = tr.ngettext("{n} card matches", "{n} cards match", len(report.rows)).format(
        n=len(report.rows))
    middle: list[Column] = [
        (tr.gettext("Card"), "left"),
        (tr.gettext("Vendor"), "left"),
        (tr.gettext("Memory (GiB)"), "right"),
        (tr.gettext("Bandwidth (GB/s)"), "right"),
        (tr.gettext("Released"), "left"),
    ]
    rows = [_model_row_cells(r, lang, report.summary.model) for r in report.rows]
    return _results_table(lang, title, middle, rows, wide, compact_middle=(0, 2))


@dataclass(frozen=True)
class ResultsTable:
    """A result table as the plain renderer draws it (plain_table.py)."""

    title: str
    headers: tuple[str, ...]
    justify: tuple[Justify, ...]
    rows: tuple[tuple[Cell, ...], ...]

    def text(self, width: int, color: bool = False) -> str:
        """The table drawn for a terminal `width` columns wide; where even wrapped cells do not
        fit, one block per row (so no number is cut)."""
        if plain_table.table_width(self.headers, self.rows, width) > width:
            head = f"{self.title}\n" if self.title else ""
            return head + plain_table.render_blocks(self.headers, self.rows, color, heading=(1, 0))
        return plain_table.render(self.title, self.headers, self.justify, self.rows, width,
                                  color)


def print_table(console: Console, table: ResultsTable) -> None:
    """Draw `table` on `console` at its width (colours on a colour terminal)."""
    if console.record:  # a console that keeps what it prints (export_text): through rich
        from rich.text import Text as RichText

        console.print(RichText(table.text(console.width).rstrip("\n")), soft_wrap=True,
                      highlight=False)
        return
    color = console.is_terminal and console.color_system is not None
    console.file.write(table.text(console.width, color))


def _results_table(
    lang: str,
    title: str,
    middle: Sequence[Column],
    rows: Sequence[Sequence[str | Cell]],
    wide: bool = True,
    compact_middle: Sequence[int] = (),
) -> ResultsTable:
    """Speed, range and confidence columns, then `middle` (translated), then needs, quant, fit.

    Compact (not `wide`): speed, the `compact_middle` columns of `middle`, needs, quant, fit,
    which read whole at 80 columns; long names wrap instead of being cut."""
    tr = translator(lang)
    columns: list[Column] = [
        (tr.gettext("Speed (tok/s)"), "right"),
        (tr.gettext("Range (tok/s)"), "right"),
        (tr.gettext("Confidence"), "left"),
        *middle,
        (tr.gettext("Needs (GiB)"), "right"),
        (tr.gettext("Quantization"), "left"),
        (tr.gettext("Quality"), "left"),
        (tr.gettext("Fit"), "left"),
    ]
    keep = list(range(len(columns)))
    if not wide:
        tail = range(len(columns) - 4, len(columns))
        keep = [0, *(3 + i for i in compact_middle), *tail]
    return ResultsTable(
        title, tuple(columns[i][0] for i in keep), tuple(columns[i][1] for i in keep),
        tuple(tuple(_cell(cells[i]) for i in keep) for cells in rows))


def _cell(value: str | Cell) -> Cell:
    return value if isinstance(value, Cell) else Cell(value)


def _model_row_cells(r: Row, lang: str, model: Model) -> list[str | Cell]:
    c, e = r.card, r.estimate
    return [
        *speed_cells(e, lang),
        c.name,
        c.vendor,
        format_number(c.memory_gib, lang, 0),
        format_number(c.bandwidth_gb_s, lang),
        format_release(c.release_date, c.release_date_precision, lang),
        gib(e.memory.total_gib, lang),
        e.quant or "—",
        quality_text(model, e.quant, lang) or "—",
        fit_cell(e, lang),
    ]


def _runtime_note(runtime: str, lang: str) -> str:
    """Which runtime a report's figures are for, in `lang`."""
    from tpscalc.estimate.runtimes import get_runtime

    return translator(lang).gettext("Figures for %(runtime)s.") % {
        "runtime": get_runtime(runtime).label}


def _headline(report: ModelReport) -> list[str]:
    s, lang = report.summary, report.summary.request.lang
    tr, m = translator(lang), report.model
    lines = [
        f"[bold]{m.name}[/bold] · "
        + tr.gettext("open weights")
        + " · "
        + ", ".join(m.organization)
        + " · "
        + params_text(m.parameters_total, lang)
        + " · "
        + format_release(m.publication_date, "month", lang),
        tr.gettext("{fit} of {total} cards can run it at a context of {context} tokens").format(
            fit=s.cards_fit,
            total=s.cards_total,
            context=format_number(s.request.query.context, lang),
        ),
        _runtime_note(s.request.query.runtime, lang),
    ]
    if s.smallest is not None and s.fastest is not None:
        lines.append(
            tr.gettext(
                "Smallest card that fits: {gpu}, {memory} GiB · {quant} · {tps} tok/s"
            ).format(
                gpu=s.smallest.card.name,
                memory=format_number(s.smallest.card.memory_gib, lang),
                quant=s.smallest.estimate.quant,
                tps=sig(s.smallest.tokens_per_s, lang),
            )
        )
        lines.append(
            tr.gettext("Fastest card: {gpu}, {tps} tok/s · {memory} GiB").format(
                gpu=s.fastest.card.name,
                tps=sig(s.fastest.tokens_per_s, lang),
                memory=format_number(s.fastest.card.memory_gib, lang),
            )
        )
        lines.append(
            tr.gettext(
                "Median {median} tok/s over the cards that run it; {count} reach "
                "reading speed (10 tok/s)"
            ).format(median=sig(s.median_tokens_per_s or 0.0, lang), count=s.reading_speed_cards)
        )
    return lines


def _paragraphs(title: str, items: tuple[Text, ...]) -> list[str]:
    out = [f"\n[bold underline]{title}[/bold underline]"]
    for t in items:
        out += [f"[bold]{t.title}[/bold]", t.body]
    return out


def render_model_report(
    report: ModelReport, console: Console | None = None, full: bool = True, wide: bool = False
) -> None:
    """Print the model report: headline, table, and (when `full`) record, explanations, FAQ."""
    console = console or stdout_console()
    tr = translator(report.summary.request.lang)
    for line in _headline(report):
        console.print(line)
    print_table(console, model_table(report, wide))
    for note in report.notes:
        console.print(f"[dim]{note}[/dim]")
    if not full:
        return
    full_record = tr.gettext("Full record")
    record_lines = [f"\n[bold underline]{full_record}[/bold underline]"]
    for sec in report.record:
        record_lines.append(f"[bold]{sec.title}[/bold]")
        record_lines += [f"  {f.name}: {f.value}" for f in sec.fields]
    console.print(Group(*record_lines))
    console.print(Group(*_paragraphs(tr.gettext("What the numbers mean"), report.explanations)))
    console.print(Group(*_paragraphs(tr.gettext("How to choose a GPU"), report.guide)))
    console.print(Group(*_paragraphs(tr.gettext("Questions"), report.faq)))


def card_table(report: CardReport, wide: bool = False) -> ResultsTable:
    """The table of models the card runs (compact unless `wide`)."""
    lang = report.request.lang
    tr = translator(lang)
    title = tr.ngettext("{n} model matches", "{n} models match", len(report.rows)).format(
        n=len(report.rows)
    )
    middle: list[Column] = [
        (tr.gettext("Model"), "left"),
        (tr.gettext("Organization"), "left"),
        (tr.gettext("Parameters"), "right"),
        (tr.gettext("Released"), "left"),
    ]
    rows = [_card_row_cells(r, lang) for r in report.rows]
    target = report.request.serving.users_at
    if target is None:
        return _results_table(lang, title, middle, rows, wide, compact_middle=(0, 2))
    # asked with --users-at: the most users at that speed each, after the release month
    middle.append((tr.gettext("Users at {speed} tok/s").format(speed=sig(target, lang)), "right"))
    rows = [[*cells[:7], format_number(r.users or 0, lang), *cells[7:]]
            for cells, r in zip(rows, report.rows, strict=True)]
    return _results_table(lang, title, middle, rows, wide, compact_middle=(0, 2, 4))


def _card_row_cells(r: ModelRow, lang: str) -> list[str | Cell]:
    m, e = r.model, r.estimate
    needs = gib(e.memory.total_gib, lang) + ("*" if e.memory.approximated else "")
    name = m.name if r.max_context is None else m.name + " " + translator(lang).gettext(
        "(max {tokens} tokens)").format(tokens=format_number(r.max_context, lang))
    return [
        *speed_cells(e, lang),
        name,
        ", ".join(m.organization)[:40],
        params_text(m.parameters_total, lang),
        format_release(m.publication_date, "month", lang),
        needs,
        e.quant or "—",
        quality_text(m, e.quant, lang) or "—",
        fit_cell(e, lang),
    ]


def render_card_report(
    report: CardReport, console: Console | None = None, wide: bool = False
) -> None:
    """Print the card report: specs, counts, table, FAQ."""
    console = console or stdout_console()
    lang, c = report.request.lang, report.card
    tr = translator(lang)
    console.print(
        f"[bold]{c.name}[/bold] · {c.vendor} · "
        + tr.gettext("{memory} GiB · {bandwidth} GB/s · released {date}").format(
            memory=format_number(c.memory_gib, lang),
            bandwidth=format_number(c.bandwidth_gb_s, lang),
            date=format_release(c.release_date, c.release_date_precision, lang),
        )
    )
    console.print(
        tr.gettext("{fit} of {total} models fit at a context of {context} tokens").format(
            fit=report.models_fit,
            total=report.models_total,
            context=format_number(report.request.query.context, lang),
        )
    )
    console.print(_runtime_note(report.request.query.runtime, lang))
    print_table(console, card_table(report, wide))
    approximated = tr.gettext("Memory approximated from the parameter count.")  # (extractable)
    console.print(f"[dim]* {approximated}[/dim]")
    for note in report.notes:
        console.print(f"[dim]{note}[/dim]")
    console.print(Group(*_paragraphs(tr.gettext("Questions"), report.faq)))
