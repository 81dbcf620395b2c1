"""Command-line options generated from the one request definition (`tpscalc.report.request`).

`request_options(names)` adds one `--option` per request field to a command, with the field's
help text, and hands the command the parsed `ReportRequest`; a bad value ends with one line and
exit code 2, with the same message the site gives.
"""
from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import typer

from tpscalc.cli.app import fail
from tpscalc.report.request import PARAM, ReportRequest, RequestError, parse_request

_METAVAR = {"tokens": "TOKENS", "count": "TOKENS", "gib": "GIB", "text": "TEXT",
            "quality": "QUANT", "rate": "GB/S", "split": "A,B", "tok_s": "TOK/S"}


def _option(name: str) -> inspect.Parameter:
    p = PARAM[name]
    if p.kind == "flag":
        default: Any = typer.Option(False, p.option, help=p.help)
        annotation: Any = bool
    elif p.kind == "flag_on":
        default = typer.Option(None, f"{p.option}/--no-{p.option[2:]}", help=p.help)
        annotation = bool | None
    else:
        metavar = p.unit or _METAVAR.get(p.kind) or "|".join(p.choices).upper()
        default = typer.Option(None, p.option, help=p.help, metavar=metavar)
        annotation = str | None
    return inspect.Parameter(f"opt_{name}", inspect.Parameter.KEYWORD_ONLY, default=default,
                             annotation=annotation)


def request_options(names: tuple[str, ...]) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Give a command the options `names` and call it with `request=` the parsed ReportRequest."""

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        signature = inspect.signature(command, eval_str=True)
        own = [p for p in signature.parameters.values() if p.name != "request"]
        added = [_option(n) for n in names]

        @functools.wraps(command)
        def wrapper(**kwargs: Any) -> None:
            raw = {n: kwargs.pop(f"opt_{n}") for n in names}
            try:
                request = parse_request(raw, names)
            except RequestError as exc:
                fail(str(exc))
            command(request=request, **kwargs)

        params = own + added
        wrapper.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in params}
        return wrapper

    return decorate


__all__ = ["ReportRequest", "request_options"]
