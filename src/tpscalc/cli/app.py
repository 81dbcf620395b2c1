"""The Typer application and the one place bad input becomes a one-line message and exit code 2."""
from __future__ import annotations

import sys
from typing import NoReturn

import typer

app = typer.Typer(
    name="tpscalc",
    help="Which graphics card runs which open-weight language model, and how fast.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


class UserInputError(ValueError):
    """Bad input from the user: printed as one line, exit code 2."""


def fail(message: str) -> NoReturn:
    """Print `message` on stderr as one line and exit with code 2."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code=2)


def _register() -> None:
    # Each module adds its commands to `app`; imported here so `tpscalc --help` lists them all.
    from tpscalc.cli import catalog_cmds, estimate_cmds, report_cmds, web_cmds  # noqa: F401


def main() -> None:
    """Console-script entry point."""
    _register()
    try:
        app()
    except UserInputError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(2)
