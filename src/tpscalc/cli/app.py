"""The Typer application; bad input becomes one line and exit code 2 through `output.fail`.

Command modules add their commands to `app` when imported; `typer_app.py` imports them all.
Click's own usage errors (an unknown option, a value outside a choice) are one line too: the
group below catches them instead of Typer's boxed message.
"""
from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import typer
from typer._click import exceptions as click  # Typer's own copy of click (its errors)
from typer.core import TyperGroup
from typer.exceptions import Abort

from tpscalc.cli.output import echo, fail


class OneLineErrors(TyperGroup):
    """The command group whose usage errors print as `error: ...` on one line, exit code 2."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             windows_expand_args: bool = True, **extra: Any) -> Any:
        """Click's main, its ClickExceptions (but the no-arguments help) as one line."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode,
                                windows_expand_args, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, False, windows_expand_args,
                              **extra)
        except click.NoArgsIsHelpError as exc:  # `tpscalc` alone: the help, as before
            from typer import rich_utils

            rich_utils.rich_format_error(exc)
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            message = " ".join(exc.format_message().split())
            ctx = getattr(exc, "ctx", None)
            if ctx is not None:
                message += f" (see '{ctx.command_path} --help')"
            fail(message, exc.exit_code)
        except Abort:
            echo("Aborted!", err=True)
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


app = typer.Typer(
    name="tpscalc",
    help="Which graphics card runs which open-weight language model, and how fast.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=OneLineErrors,
)

__all__ = ["app", "fail"]
