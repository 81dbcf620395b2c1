"""`tpscalc here`: this machine's GPUs, RAM and CPU, and what its card can run."""
from __future__ import annotations

from typing import Annotated

import typer

from tpscalc.cli import jsonout
from tpscalc.cli.app import app
from tpscalc.cli.options import request_options
from tpscalc.report.request import CARD_REPORT_PARAMS, ReportRequest


@app.command("here")
@request_options(CARD_REPORT_PARAMS)
def here_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="Print the machine as JSON.")] = False,
    *,
    request: ReportRequest,
) -> None:
    """This machine: GPUs (memory in GiB), RAM, CPU, and the models its card runs."""
    from tpscalc import api

    machine = api.detect_machine()
    if as_json:
        typer.echo(jsonout.dumps(api.machine_json(machine)))
        return
    data = api.machine_json(machine)
    for g in data["gpus"]:
        memory = f"{g['memory_gib']:.1f} GiB" if g["memory_gib"] is not None else "memory unknown"
        typer.echo(f"GPU: {g['name']} ({memory}, {g['backend']}"
                   + (f", {g['pcie']}" if g["pcie"] else "")
                   + f") → catalog card: {g['card'] or 'not matched'}")
    typer.echo(f"RAM: {data['ram_gib']:.1f} GiB ({data['ram_available_gib']:.1f} GiB available), "
               f"{data['ram_bandwidth_gb_s']:g} GB/s"
               + ("" if data["ram_bandwidth_measured"] else " (assumed)"))
    typer.echo(f"CPU: {data['cpu']} ({data['cpu_cores']} cores); OS: {data['os']}")
    for note in data["notes"]:
        typer.echo(f"Note: {note}")
    if machine.rig is not None and machine.rig.devices:  # a CPU-only machine: the note says how
        from tpscalc.cli.render import render_card_report
        from tpscalc.report.card_report import build_card_report

        typer.echo("")
        render_card_report(build_card_report(machine.rig.devices[0], request))
