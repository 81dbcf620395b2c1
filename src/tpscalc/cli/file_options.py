"""Options that name the user's own model file or machine: --gguf, --config, --here."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from tpscalc.cli.app import fail
from tpscalc.estimate.query import Rig

if TYPE_CHECKING:  # the catalog (pydantic) loads when a command runs, not for --help
    from tpscalc.catalog.schema import Card

GgufOpt = Annotated[Path | None, typer.Option(
    "--gguf", help="A local GGUF file (any shard of a split one): exact sizes from its header.")]
ConfigOpt = Annotated[Path | None, typer.Option(
    "--config", help="A Hugging Face config.json instead of a catalog model.")]
ConfigIndexOpt = Annotated[Path | None, typer.Option(
    "--config-index", help="model.safetensors.index.json: the exact parameter count.")]
HfOpt = Annotated[str | None, typer.Option(
    "--hf", help="A Hugging Face repository id: its config.json, or a GGUF's header.")]
HereOpt = Annotated[bool, typer.Option(
    "--here", help="Use this machine (detected): its GPUs and RAM, or its CPU and RAM alone.")]


def here_card(card: str | None) -> Card:
    """This machine's first matched GPU as a card (the reports compare one card); one line and
    exit 2 when there is none."""
    if card:
        fail("give --here or a card name, not both")
    rig = here_rig(None)
    if not rig.devices:
        fail("no GPU found on this machine: the reports compare cards; "
             "`tpscalc estimate --model M --here` answers for its CPU and RAM")
    return rig.devices[0]


def here_rig(card: str | None) -> Rig:
    """This machine as a rig: its matched GPUs and its RAM, or its CPU and RAM alone."""
    from tpscalc import api

    if card:
        fail("give --here or a card name, not both")
    machine = api.detect_machine()
    if machine.rig is None:
        fail(" ".join(machine.notes[:1]) or "nothing detected on this machine")
    return machine.rig
