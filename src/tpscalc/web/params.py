"""Query strings into the one request definition (`tpscalc.report.request`), errors as 400s."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from tpscalc.report.request import (
    ReportRequest,
    RequestError,
    parse_gib,
    parse_quant,
    parse_request,
)
from tpscalc.web.errors import WebError


def _web_error(exc: RequestError) -> WebError:
    return WebError(400, exc.code, str(exc), tuple(exc.suggestions))


def request_from(
    params: Mapping[str, str], allowed: tuple[str, ...], lang: str | None = None
) -> ReportRequest:
    """The report request a query string describes (`lang` from the path, when it has one)."""
    try:
        parsed = parse_request(params, allowed)
    except RequestError as exc:
        raise _web_error(exc) from None
    return parsed if lang is None else replace(parsed, lang=lang)


def quant_from(raw: str | None) -> str | None:
    """The `quant` of one estimate, or WebError 400."""
    try:
        return parse_quant(raw)
    except RequestError as exc:
        raise _web_error(exc) from None


def parse_memory(raw: str | None, name: str) -> float | None:
    """An index filter amount (GiB, or billions of parameters) with the request's number rule."""
    if raw is None or raw.strip() == "":
        return None
    try:
        return parse_gib(raw, name)
    except RequestError as exc:
        raise _web_error(exc) from None
