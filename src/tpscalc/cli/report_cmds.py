"""`tpscalc model NAME` and `tpscalc card NAME`: the two reports as a table or JSON."""
from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from tpscalc.cli.app import app, fail

ContextOpt = Annotated[int, typer.Option("--context", help="Context length, tokens.")]
QualityOpt = Annotated[str | None, typer.Option(
    "--min-quality", help="Least precise quantization allowed (e.g. Q4_K_M).")]
SearchOpt = Annotated[str | None, typer.Option("--search", help="Only rows whose name contains this.")]
BackendOpt = Annotated[str | None, typer.Option(
    "--backend", help="cuda, rocm, vulkan, metal or sycl (default: the vendor's usual).")]
LangOpt = Annotated[str, typer.Option("--lang", help="Language of the report: en, es or nl.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the whole report as JSON.")]
AllOpt = Annotated[bool, typer.Option("--all", help="Also show rows that do not fit.")]


def _print_json(data: Any) -> None:
    typer.echo(json.dumps(data, ensure_ascii=False, indent=1))


@app.command("model")
def model_cmd(
    name: Annotated[str, typer.Argument(help="Model name, e.g. 'StarCoder 2 15B'.")],
    context: ContextOpt = 4096,
    min_quality: QualityOpt = None,
    min_memory: Annotated[float | None, typer.Option(
        "--min-memory", help="Only cards with at least this much memory, GiB.")] = None,
    max_memory: Annotated[float | None, typer.Option(
        "--max-memory", help="Only cards with at most this much memory, GiB.")] = None,
    search: SearchOpt = None,
    show_all: AllOpt = False,
    backend: BackendOpt = None,
    lang: LangOpt = "en",
    brief: Annotated[bool, typer.Option("--brief", help="Only the headline and the table.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Which cards run this model, at which quantization, in how much memory (GiB), how fast (tok/s)."""
    from tpscalc.report.common import input_errors
    from tpscalc.report.model_report import build_model_report

    try:
        report = build_model_report(
            name, context=context, min_quality=min_quality, min_memory_gib=min_memory,
            max_memory_gib=max_memory, search=search, show_all=show_all, backend=backend, lang=lang)
    except input_errors() as exc:
        fail(str(exc))
    if as_json:
        _print_json(report.to_json())
        return
    from tpscalc.report.text import render_model_report

    render_model_report(report, full=not brief)


@app.command("card")
def card_cmd(
    name: Annotated[str, typer.Argument(help="Card name, e.g. '4090' or 'RTX 3060 12 GB'.")],
    context: ContextOpt = 4096,
    min_quality: QualityOpt = None,
    search: SearchOpt = None,
    sort: Annotated[str, typer.Option("--sort", help="size (default), speed or date.")] = "size",
    show_all: AllOpt = False,
    backend: BackendOpt = None,
    lang: LangOpt = "en",
    as_json: JsonOpt = False,
) -> None:
    """Which models this card runs, at which quantization, in how much memory (GiB), how fast (tok/s)."""
    from tpscalc.report.card_report import build_card_report
    from tpscalc.report.common import input_errors

    try:
        report = build_card_report(name, context=context, min_quality=min_quality, search=search,
                                   sort=sort, show_all=show_all, backend=backend, lang=lang)
    except input_errors() as exc:
        fail(str(exc))
    if as_json:
        _print_json(report.to_json())
        return
    from tpscalc.report.text import render_card_report

    render_card_report(report)
