"""Command-line interface: thin commands that call the catalog, the engine and the reports."""
from __future__ import annotations

from tpscalc.cli.app import app
from tpscalc.cli.main import main

__all__ = ["app", "main"]
