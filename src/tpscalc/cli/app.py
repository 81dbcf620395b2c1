"""The Typer application; bad input becomes one line and exit code 2 through `output.fail`.

Command modules add their commands to `app` when imported; `typer_app.py` imports them all.
"""
from __future__ import annotations

import typer

from tpscalc.cli.output import fail

app = typer.Typer(
    name="tpscalc",
    help="Which graphics card runs which open-weight language model, and how fast.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

__all__ = ["app", "fail"]
