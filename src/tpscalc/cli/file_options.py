"""Options that name the user's own model file or machine: --gguf, --config, --here."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tpscalc.catalog.schema import Card
from tpscalc.cli.app import fail

GgufOpt = Annotated[Path | None, typer.Option(
    "--gguf", help="A local GGUF file (any shard of a split one): exact sizes from its header.")]
ConfigOpt = Annotated[Path | None, typer.Option(
    "--config", help="A Hugging Face config.json instead of a catalog model.")]
ConfigIndexOpt = Annotated[Path | None, typer.Option(
    "--config-index", help="model.safetensors.index.json: the exact parameter count.")]
HfOpt = Annotated[str | None, typer.Option(
    "--hf", help="A Hugging Face repository id: its config.json, or a GGUF's header.")]
HereOpt = Annotated[bool, typer.Option(
    "--here", help="Use this machine's GPU (detected) as the card.")]


def here_card(card: str | None) -> Card:
    """This machine's one matched GPU as a card; one line and exit 2 when there is none."""
    from tpscalc import api

    if card:
        fail("give --here or a card name, not both")
    machine = api.detect_machine()
    if machine.rig is None:
        fail(" ".join(machine.notes[:1]) or "no GPU found on this machine")
    return machine.rig.devices[0]
