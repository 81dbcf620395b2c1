"""`tpscalc estimate`: one model on one card, or every row of a CSV file."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tpscalc.cli.app import app
from tpscalc.cli.estimate_run import (  # re-exported: tests and tools read them here
    CSV_COLUMNS,
    EXIT_SOME_ROWS_FAILED,
    MAX_FIELD_CHARS,
    OPTIONAL_COLUMNS,
    read_requests,
    run_estimate,
)
from tpscalc.cli.file_options import (
    ConfigIndexOpt,
    ConfigOpt,
    GgufOpt,
    HereOpt,
    HfOpt,
)
from tpscalc.cli.options import request_options
from tpscalc.report.request import ESTIMATE_CLI_PARAMS, ReportRequest

__all__ = ["CSV_COLUMNS", "EXIT_SOME_ROWS_FAILED", "MAX_FIELD_CHARS", "OPTIONAL_COLUMNS",
           "read_requests"]


@app.command("estimate")
@request_options(ESTIMATE_CLI_PARAMS)
def estimate_cmd(
    model: Annotated[str | None, typer.Option("--model", help="Model name.")] = None,
    card: Annotated[
        str | None, typer.Option("--card", "--gpu", help="Card name (--gpu is the same).")
    ] = None,
    quant: Annotated[
        str | None,
        typer.Option("--quant", help="Quantization (default: the least compressed that fits)."),
    ] = None,
    input_csv: Annotated[
        Path | None,
        typer.Option("--input", help="CSV with columns model,card,quant,context,backend,kv_type "
                     "and optionally text_only,n_prompt,n_gen,depth,flash_attn,n_ubatch."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    gguf: GgufOpt = None,
    config: ConfigOpt = None,
    config_index: ConfigIndexOpt = None,
    hf: HfOpt = None,
    here: HereOpt = False,
    *,
    request: ReportRequest,
) -> None:
    """Memory (GiB), fit and speed (tok/s) of one model on one card, or of every row of a CSV."""
    run_estimate(model, card, request, quant=quant, input_csv=input_csv, as_json=as_json,
                 gguf=gguf, config=config, config_index=config_index, hf=hf, here=here)
