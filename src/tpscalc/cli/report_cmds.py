"""`tpscalc model NAME` and `tpscalc card NAME`: the two reports as a table or JSON."""
from __future__ import annotations

from typing import Annotated

import typer

from tpscalc.cli.app import app
from tpscalc.cli.file_options import (
    ConfigIndexOpt,
    ConfigOpt,
    GgufOpt,
    HereOpt,
    HfOpt,
)
from tpscalc.cli.options import request_options
from tpscalc.cli.report_run import input_errors, run_card, run_model
from tpscalc.report.request import (
    CARD_RIG_REPORT_PARAMS,
    MODEL_RIG_REPORT_PARAMS,
    ReportRequest,
)

WideOpt = Annotated[bool, typer.Option(
    "--wide",
    help="Every column (range, confidence, vendor, bandwidth, dates), not the compact table.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the whole report as JSON.")]


def _input_errors() -> tuple[type[Exception], ...]:
    """tpscalc.api.INPUT_ERRORS without importing tpscalc.api (a test keeps them equal)."""
    return input_errors()


@app.command(
    "model",
    help="Which cards run this model, at which quantization, in how much memory (GiB), "
    "how fast (tok/s).",
)
@request_options(MODEL_RIG_REPORT_PARAMS)
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
    run_model(name, request, brief=brief, as_json=as_json, wide=wide, gguf=gguf, config=config,
              config_index=config_index, hf=hf, here=here)


@app.command(
    "card",
    help="Which models this card runs, at which quantization, in how much memory (GiB), "
    "how fast (tok/s).",
)
@request_options(CARD_RIG_REPORT_PARAMS)
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
    run_card(name, request, as_json=as_json, wide=wide, here=here)
