"""The one seam to the report builder: model and card reports as JSON-ready dicts, cached."""
from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from tpscalc.catalog import NameNotFoundError, get_card, get_model, store
from tpscalc.catalog.schema import Card, Model
from tpscalc.report.request import ReportRequest
from tpscalc.report.serialize import report_json
from tpscalc.web.errors import WebError

REPORT_CACHE_SIZE = 512  # reports kept in memory (~0.9 MB each at 850 rows)


def model_builder() -> Callable[[Model, ReportRequest], Any]:
    """tpscalc.report.model_report.build_model_report (a seam tests replace)."""
    from tpscalc.report.model_report import build_model_report

    return build_model_report


def card_builder() -> Callable[[Card, ReportRequest], Any]:
    """tpscalc.report.card_report.build_card_report (a seam tests replace)."""
    from tpscalc.report.card_report import build_card_report

    return build_card_report


def find_model(slug: str) -> Model:
    """The model with this slug (or a name resolving to one), else WebError 404 with suggestions."""
    try:
        return get_model(slug)
    except NameNotFoundError as exc:
        raise WebError(404, "unknown_model", str(exc), exc.suggestions) from None


def find_card(slug: str) -> Card:
    """The card with this slug (or a name resolving to one), else WebError 404 with suggestions."""
    try:
        return get_card(slug)
    except NameNotFoundError as exc:
        raise WebError(404, "unknown_card", str(exc), exc.suggestions) from None


@lru_cache(maxsize=REPORT_CACHE_SIZE)
def model_report(slug: str, request: ReportRequest) -> dict[str, Any]:
    """The model report as the JSON API returns it (and the HTML page renders it)."""
    out: dict[str, Any] = report_json(model_builder()(find_model(slug), request))
    return out


@lru_cache(maxsize=REPORT_CACHE_SIZE)
def card_report(slug: str, request: ReportRequest) -> dict[str, Any]:
    """The card report as the JSON API returns it (and the HTML page renders it)."""
    out: dict[str, Any] = report_json(card_builder()(find_card(slug), request))
    return out


def clear_cache() -> None:
    """Forget cached reports (tests; after the catalog changes)."""
    model_report.cache_clear()
    card_report.cache_clear()


def catalog_sizes() -> tuple[int, int]:
    """(models, cards) in the catalog."""
    return len(store.models()), len(store.cards())
