"""The console every command prints its tables on."""
from __future__ import annotations

from rich.console import Console

PIPE_WIDTH = 200  # columns when printing to a file or pipe, so rows stay one line each


def stdout_console() -> Console:
    """A console for stdout: the terminal's width, or PIPE_WIDTH when piped."""
    # highlight=False: no colouring of every number rich finds in the text (a regex pass over
    # each printed line, ~10 % of `tpscalc model`'s time; the output's bytes are the same).
    out = Console(highlight=False)
    return out if out.is_terminal else Console(width=PIPE_WIDTH, highlight=False)
