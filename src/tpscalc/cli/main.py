"""The console entry point: the hot commands on the fast path (fast.py), all else through Typer.

`app` (the Typer application with every command) loads on first use, so `tpscalc model NAME`
imports no Typer.
"""
from __future__ import annotations

import gc
import os
import sys
from typing import Any


def main() -> None:
    """Console-script entry point: a reader that closes the pipe early (`| head`) ends it
    quietly, as a shell tool does (exit 141: SIGPIPE), not with a traceback."""
    try:
        _main()
    except BrokenPipeError:
        os._exit(141)


def _main() -> None:
    # A fast-path answer is one short computation: the cycle collector would spend ~30 ms on
    # the catalog's objects (and ~3 ms on the imports' own) and freeing them at exit ~40 ms
    # more, memory nobody needs back.
    gc.disable()
    if sys.argv[1:] == ["--help"]:  # the top-level help without Typer's ~0.3 s of imports
        from tpscalc.cli.help_text import help_text

        sys.stdout.write(help_text())
        sys.stdout.flush()
        os._exit(0)
    from tpscalc.cli.fast import run

    if run(sys.argv[1:]):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    gc.enable()  # Typer's commands include the long-running server
    from tpscalc.cli.typer_app import app

    app()


def __getattr__(name: str) -> Any:
    """`app` and `COMMAND_MODULES`, imported on first use."""
    if name in ("app", "COMMAND_MODULES"):
        from tpscalc.cli import typer_app

        return getattr(typer_app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
