"""`tpscalc model NAME` and `tpscalc card NAME`: the two reports as a table or JSON."""
from __future__ import annotations

from typing import Annotated, Any

import typer

from tpscalc.cli import jsonout
from tpscalc.cli.app import app, fail
from tpscalc.cli.file_options import (
    ConfigIndexOpt,
    ConfigOpt,
    GgufOpt,
    HereOpt,
    HfOpt,
    here_card,
)
from tpscalc.cli.options import request_options
from tpscalc.report.request import (
    CARD_REPORT_PARAMS,
    MODEL_REPORT_PARAMS,
    REPORT_RIG_PARAMS,
    ReportRequest,
)

WideOpt = Annotated[bool, typer.Option(
    "--wide",
    help="Every column (range, confidence, vendor, bandwidth, dates), not the compact table.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the whole report as JSON.")]


def _input_errors() -> tuple[type[Exception], ...]:
    """tpscalc.api.INPUT_ERRORS without importing tpscalc.api (a test keeps them equal)."""
    from tpscalc.catalog.lookup import NameNotFoundError
    from tpscalc.estimate.query import EstimateInputError

    return (EstimateInputError, NameNotFoundError)


def _print_json(data: Any) -> None:
    typer.echo(jsonout.dumps(data))


@app.command(
    "model",
    help="Which cards run this model, at which quantization, in how much memory (GiB), "
    "how fast (tok/s).",
)
@request_options(MODEL_REPORT_PARAMS + REPORT_RIG_PARAMS)
def model_cmd(
    name: Annotated[
        str | None, typer.Argument(help="Model name, e.g. 'StarCoder 2 15B'.")
    ] = None,
    brief: Annotated[
        bool, typer.Option("--brief", help="Only the headline and the table.")
    ] = False,
    as_json: JsonOpt = False,
    wide: WideOpt = False,
    gguf: GgufOpt = None,
    config: ConfigOpt = None,
    config_index: ConfigIndexOpt = None,
    hf: HfOpt = None,
    here: HereOpt = False,
    *,
    request: ReportRequest,
) -> None:
    # The plain `tpscalc model NAME` path imports only the report builder: tpscalc.api (model
    # files, the Hub client, machine detection) is for the other paths.
    from tpscalc.report.model_report import build_model_report, model_report
    from tpscalc.report.serialize import report_json

    cards = [here_card(None)] if here else None
    sources: dict[str, str] | None = None
    try:
        if gguf or config or hf or not name or cards:
            from tpscalc import api

            sm = api.sourced_model(name, gguf=gguf, config=config, config_index=config_index,
                                   hf=hf)
            api.check_file_request(sm, request)
            report = build_model_report(sm.model, request, cards=cards)
            sources = sm.sources if (gguf or config or hf) else None
        else:
            report = model_report(name, request)
    except _input_errors() as exc:
        fail(str(exc))
    if as_json:
        data = report_json(report)
        if sources:
            data["sources"] = sources
        _print_json(data)
        return
    from tpscalc.cli.render import render_model_report

    render_model_report(report, full=not brief, wide=wide)
    if sources:
        typer.echo("Sources: " + "; ".join(f"{k}: {v}" for k, v in sources.items()))


@app.command(
    "card",
    help="Which models this card runs, at which quantization, in how much memory (GiB), "
    "how fast (tok/s).",
)
@request_options(CARD_REPORT_PARAMS + REPORT_RIG_PARAMS)
def card_cmd(
    name: Annotated[
        str | None, typer.Argument(help="Card name, e.g. '4090' or 'RTX 3060 12 GB'.")
    ] = None,
    as_json: JsonOpt = False,
    wide: WideOpt = False,
    here: HereOpt = False,
    *,
    request: ReportRequest,
) -> None:
    from tpscalc.report.card_report import build_card_report, card_report
    from tpscalc.report.serialize import report_json

    if not name and not here:
        fail("give a card name (or --here)")
    try:
        report = (build_card_report(here_card(name), request) if here
                  else card_report(str(name), request))
    except _input_errors() as exc:
        fail(str(exc))
    if as_json:
        _print_json(report_json(report))
        return
    from tpscalc.cli.render import render_card_report

    render_card_report(report, wide=wide)
