"""The Typer application and the one place bad input becomes a one-line message and exit code 2.

Command modules add their commands to `app` when imported; `main.py` imports them all.
"""
from __future__ import annotations

from typing import NoReturn

import typer

app = typer.Typer(
    name="tpscalc",
    help="Which graphics card runs which open-weight language model, and how fast.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def fail(message: str) -> NoReturn:
    """Print `message` on stderr as one line and exit with code 2."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code=2)
