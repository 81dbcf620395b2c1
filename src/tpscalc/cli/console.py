"""The console every command prints its tables on."""
from __future__ import annotations

from rich.console import Console

PIPE_WIDTH = 200  # columns when printing to a file or pipe, so rows stay one line each


def stdout_console() -> Console:
    """A console for stdout: the terminal's width, or PIPE_WIDTH when piped."""
    out = Console()
    return out if out.is_terminal else Console(width=PIPE_WIDTH)
