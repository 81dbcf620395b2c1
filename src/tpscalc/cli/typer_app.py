"""The Typer application with every command module registered on it."""
from __future__ import annotations

from tpscalc.cli import catalog_cmds, estimate_cmds, machine_cmds, report_cmds, web_cmds
from tpscalc.cli.app import app

COMMAND_MODULES = (catalog_cmds, estimate_cmds, machine_cmds, report_cmds, web_cmds)

__all__ = ["COMMAND_MODULES", "app"]
