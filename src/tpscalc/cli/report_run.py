"""What `tpscalc model` and `tpscalc card` do once their arguments are parsed, without Typer:
the Typer commands (report_cmds.py) and the fast path (fast.py) both call these."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tpscalc.cli import jsonout
from tpscalc.cli.output import echo, fail
from tpscalc.report.request import ReportRequest

if TYPE_CHECKING:  # pathlib costs ~5 ms of imports; the plain commands take no path
    from pathlib import Path


def input_errors() -> tuple[type[Exception], ...]:
    """tpscalc.api.INPUT_ERRORS without importing tpscalc.api (a test keeps them equal)."""
    from tpscalc.catalog.lookup import NameNotFoundError
    from tpscalc.estimate.query import EstimateInputError

    return (EstimateInputError, NameNotFoundError)


def print_json(data: Any) -> None:
    """The report as `tpscalc ... --json` prints it."""
    echo(jsonout.dumps(data))


def run_model(name: str | None, request: ReportRequest, *, brief: bool = False,
              as_json: bool = False, wide: bool = False, gguf: Path | None = None,
              config: Path | None = None, config_index: Path | None = None,
              hf: str | None = None, here: bool = False) -> None:
    """`tpscalc model`: the model report as a table or JSON."""
    # The plain `tpscalc model NAME` path imports only the report builder: tpscalc.api (model
    # files, the Hub client, machine detection) is for the other paths.
    from tpscalc.report.model_report import build_model_report
    from tpscalc.report.serialize import report_json

    if here:
        from tpscalc.cli.file_options import here_card

    cards = [here_card(None)] if here else None
    sources: dict[str, str] | None = None
    resolved: dict[str, Any] | None = None
    try:
        if gguf or config or hf or not name or cards:
            from tpscalc import api

            sm = api.sourced_model(name, gguf=gguf, config=config, config_index=config_index,
                                   hf=hf)
            api.check_file_request(sm, request)
            report = build_model_report(sm.model, request, cards=cards)
            sources = sm.sources if (gguf or config or hf) else None
        else:
            from tpscalc.sources.load import resolve_name

            found = resolve_name(name)  # model_report(name, request), keeping how it was found
            report = build_model_report(found.model, request)
            resolved = found.resolved_as
    except input_errors() as exc:
        fail(str(exc))
    if as_json:
        data = report_json(report)
        if sources:
            data["sources"] = sources
        if resolved:
            data["resolved_as"] = resolved
        print_json(data)
        return
    from tpscalc.cli.render import render_model_report

    render_model_report(report, full=not brief, wide=wide)
    if sources:
        echo("Sources: " + "; ".join(f"{k}: {v}" for k, v in sources.items()))
    if resolved:
        echo(resolved_line(resolved))


def resolved_line(resolved: dict[str, Any]) -> str:
    """How a model name was resolved, in one line ("Jackrong/Qwopus3.5-27B-v3: fine-tune of
    Qwen3.5-27B (its architecture; context 262,144 from llmfit's list)")."""
    named = resolved.get("repo") or resolved.get("as")
    if resolved["kind"] == "fine-tune":
        facts = [f"{k} {v:,.0f}" for k, v in resolved.items()
                 if k in ("parameters", "context") and isinstance(v, (int, float))]
        extra = f"; {', '.join(facts)} from llmfit's list" if facts else ""
        return f"Resolved as: {named}, a fine-tune of {resolved['base']} (its architecture{extra})"
    like = f"; its family's closest catalog model: {resolved['like']}" if resolved.get(
        "like") else ""
    if resolved["kind"] == "architecture":
        return (f"Resolved as: {named}, sized from llmfit's config fields "
                f"({resolved['parameters']:,.0f} parameters{like})")
    if resolved["kind"] == "unknown-family":
        return (f"Resolved as: {named}, approximated from llmfit's parameter count "
                f"({resolved['parameters']:,.0f}) of an architecture family neither the "
                "catalog nor llama.cpp's converter is known to hold")
    if resolved["kind"] == "parameters":
        return (f"Resolved as: {named}, approximated from llmfit's parameter count "
                f"({resolved['parameters']:,.0f}{like})")
    return f"Resolved as: {resolved['base']} ({named})"


def run_card(name: str | None, request: ReportRequest, *, as_json: bool = False,
             wide: bool = False, here: bool = False) -> None:
    """`tpscalc card`: the card report as a table or JSON."""
    from tpscalc.report.card_report import build_card_report, card_report
    from tpscalc.report.serialize import report_json

    if not name and not here:
        fail("give a card name (or --here)")
    try:
        if here:
            from tpscalc.cli.file_options import here_card

            report = build_card_report(here_card(name), request)
        else:
            report = card_report(str(name), request)
    except input_errors() as exc:
        fail(str(exc))
    if as_json:
        print_json(report_json(report))
        return
    from tpscalc.cli.render import render_card_report

    render_card_report(report, wide=wide)
