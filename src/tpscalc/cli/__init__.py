"""Command-line interface: thin commands that call the catalog, the engine and the reports."""
from __future__ import annotations

from typing import Any

from tpscalc.cli.main import main


def __getattr__(name: str) -> Any:
    """`app`, the Typer application, imported on first use (the fast path needs no Typer)."""
    if name == "app":
        from tpscalc.cli.typer_app import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["app", "main"]
