"""Query strings into the one request definition (`tpscalc.report.request`), errors as 400s."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from tpscalc.i18n import LANGUAGES
from tpscalc.report.request import (
    PARAM,
    ReportRequest,
    RequestError,
    parse_gib,
    parse_quant,
    parse_request,
)
from tpscalc.web.errors import WebError


def _web_error(exc: RequestError) -> WebError:
    return WebError(400, exc.code, str(exc), tuple(exc.suggestions))


def query_text(query: Mapping[str, str]) -> str:
    """A link's query string from a page's settings: "?a=1&b=2", or "" when there are none."""
    from urllib.parse import urlencode

    return "?" + urlencode(query) if query else ""


def check_lang(lang: str) -> str:
    """`lang` when the site speaks it, else a 404 naming the languages it does."""
    if lang not in LANGUAGES:
        raise WebError(
            404, "unknown_language", f"unknown language {lang!r}; use one of {', '.join(LANGUAGES)}"
        )
    return lang


def request_from(
    params: Mapping[str, str], allowed: tuple[str, ...], lang: str | None = None
) -> ReportRequest:
    """The report request a query string describes (`lang` from the path, when it has one)."""
    try:
        parsed = parse_request(params, allowed)
    except RequestError as exc:
        raise _web_error(exc) from None
    return parsed if lang is None else replace(parsed, lang=lang)


def refuse_other_fields(params: Mapping[str, str], allowed: tuple[str, ...]) -> None:
    """WebError 400 for a key that names a request field (or its alias) outside `allowed`: a
    page never ignores a field another interface would use (keys that are no field, such as
    partial=1 or utm_source, stay the page's own business)."""
    taken = {key for n in allowed for key in (n, *PARAM[n].aliases)}
    for key in params:
        if key in FIELD_KEYS and key not in taken:
            raise WebError(400, "unsupported_parameter",
                           f"{key} does not apply to this page")


FIELD_KEYS = frozenset(key for p in PARAM.values() for key in (p.name, *p.aliases))


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
