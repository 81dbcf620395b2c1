"""The console entry point: every command module registered on the one Typer app."""
from __future__ import annotations

from tpscalc.cli import catalog_cmds, estimate_cmds, machine_cmds, report_cmds, web_cmds
from tpscalc.cli.app import app

COMMAND_MODULES = (catalog_cmds, estimate_cmds, machine_cmds, report_cmds, web_cmds)


def main() -> None:
    """Console-script entry point."""
    app()
