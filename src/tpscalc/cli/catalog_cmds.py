"""`tpscalc cards` and `tpscalc models`: list and search the catalog."""
from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from tpscalc.cli import jsonout
from tpscalc.cli.app import app

if TYPE_CHECKING:  # the catalog (pydantic) loads when a command runs, not for --help
    from tpscalc.catalog.schema import Card, Model

SearchOpt = Annotated[
    str | None, typer.Option("--search", help="Only entries whose name contains this text.")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


def card_json(card: Card) -> dict[str, Any]:
    """The public JSON form of a card."""
    return card.model_dump(mode="json")


def model_json(model: Model, with_record: bool = False) -> dict[str, Any]:
    """The public JSON form of a model (the Epoch record only when asked)."""
    out = model.model_dump(mode="json", exclude={"record"} if not with_record else set())
    if out.get("file_weights") is None:  # only models read from a user's file carry it
        out.pop("file_weights", None)
    out["parameters_total"] = model.parameters_total
    out["parameters_active"] = model.parameters_active
    out["parameters_vision"] = model.parameters_vision
    out["parameters_note"] = model.parameters_note  # "language model + vision encoder"
    if out.get("architecture"):
        out["architecture"].pop("hf_config", None)
    return out


@app.command()
def cards(search: SearchOpt = None, as_json: JsonOpt = False) -> None:
    """List the cards in the catalog (memory in GiB, bandwidth in GB/s)."""
    from rich.table import Table

    from tpscalc.catalog import store
    from tpscalc.catalog.search import filter_by_text
    from tpscalc.cli.console import stdout_console

    rows = filter_by_text(store.cards(), search)
    if as_json:
        typer.echo(jsonout.dumps([card_json(c) for c in rows]))
        return
    table = Table(title=f"{len(rows)} cards")
    for col in (
        "Card",
        "Vendor",
        "Memory (GiB)",
        "Bandwidth (GB/s)",
        "FP16 tensor (TFLOPS)",
        "Released",
    ):
        table.add_column(col)
    for c in rows:
        tflops = f"{c.tflops_fp16_dense:.0f}" if c.tflops_fp16_dense else "?"
        table.add_row(
            c.name,
            c.vendor,
            f"{c.memory_gib:g}",
            f"{c.bandwidth_gb_s:,.0f}",
            tflops,
            c.release_date or "?",
        )
    stdout_console().print(table)


@app.command()
def models(search: SearchOpt = None, as_json: JsonOpt = False) -> None:
    """List the open-weight language models in the catalog."""
    from rich.table import Table

    from tpscalc.catalog import store
    from tpscalc.catalog.search import filter_by_text
    from tpscalc.cli.console import stdout_console

    rows = filter_by_text(store.models(), search)
    if as_json:
        typer.echo(jsonout.dumps([model_json(m) for m in rows]))
        return
    table = Table(title=f"{len(rows)} models")
    for col in ("Model", "Organization", "Parameters (B)", "Published", "Architecture"):
        table.add_column(col)
    for m in rows:
        arch = m.architecture.source.split(":")[0] if m.architecture else "approximated"
        table.add_row(
            m.name,
            ", ".join(m.organization),
            f"{m.parameters_total / 1e9:.2f}",
            m.publication_date or "?",
            arch,
        )
    stdout_console().print(table)
