"""Printing and the one-line failure, without Typer: the fast command path and the Typer
commands share them (a SystemExit ends both the same way: exit code 2 after one line)."""
from __future__ import annotations

import sys
from typing import NoReturn


def echo(text: str, *, err: bool = False, end: str = "\n") -> None:
    """`text` and a newline (or `end`) on stdout (or stderr), flushed, as click.echo prints."""
    stream = sys.stderr if err else sys.stdout
    stream.write(text + end)
    stream.flush()


def fail(message: str, code: int = 2) -> NoReturn:
    """Print `message` on stderr as one line and exit with `code` (2: bad input)."""
    echo(f"error: {message}", err=True)
    raise SystemExit(code)
