"""`tpscalc model NAME` and `tpscalc card NAME`: the two reports as a table or JSON."""
from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from tpscalc.cli.app import app, fail
from tpscalc.cli.options import request_options
from tpscalc.report.request import CARD_REPORT_PARAMS, MODEL_REPORT_PARAMS, ReportRequest

JsonOpt = Annotated[bool, typer.Option("--json", help="Print the whole report as JSON.")]


def _print_json(data: Any) -> None:
    typer.echo(json.dumps(data, ensure_ascii=False, indent=1))


@app.command(
    "model",
    help="Which cards run this model, at which quantization, in how much memory (GiB), "
    "how fast (tok/s).",
)
@request_options(MODEL_REPORT_PARAMS)
def model_cmd(
    name: Annotated[str, typer.Argument(help="Model name, e.g. 'StarCoder 2 15B'.")],
    brief: Annotated[
        bool, typer.Option("--brief", help="Only the headline and the table.")
    ] = False,
    as_json: JsonOpt = False,
    *,
    request: ReportRequest,
) -> None:
    from tpscalc import api
    from tpscalc.report.model_report import model_report

    try:
        report = model_report(name, request)
    except api.INPUT_ERRORS as exc:
        fail(str(exc))
    if as_json:
        _print_json(api.report_json(report))
        return
    from tpscalc.cli.render import render_model_report

    render_model_report(report, full=not brief)


@app.command(
    "card",
    help="Which models this card runs, at which quantization, in how much memory (GiB), "
    "how fast (tok/s).",
)
@request_options(CARD_REPORT_PARAMS)
def card_cmd(
    name: Annotated[str, typer.Argument(help="Card name, e.g. '4090' or 'RTX 3060 12 GB'.")],
    as_json: JsonOpt = False,
    *,
    request: ReportRequest,
) -> None:
    from tpscalc import api
    from tpscalc.report.card_report import card_report

    try:
        report = card_report(name, request)
    except api.INPUT_ERRORS as exc:
        fail(str(exc))
    if as_json:
        _print_json(api.report_json(report))
        return
    from tpscalc.cli.render import render_card_report

    render_card_report(report)
