"""The console entry point: the hot commands on the fast path (fast.py), all else through Typer.

`app` (the Typer application with every command) loads on first use, so `tpscalc model NAME`
imports no Typer.
"""
from __future__ import annotations

import sys
from typing import Any


def main() -> None:
    """Console-script entry point."""
    from tpscalc.cli.fast import run

    if run(sys.argv[1:]):
        return
    from tpscalc.cli.typer_app import app

    app()


def __getattr__(name: str) -> Any:
    """`app` and `COMMAND_MODULES`, imported on first use."""
    if name in ("app", "COMMAND_MODULES"):
        from tpscalc.cli import typer_app

        return getattr(typer_app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
