"""The one seam to the report builder: model and card reports as JSON-ready dicts, cached."""
from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from tpscalc.catalog import NameNotFoundError, get_card, get_model, store
from tpscalc.web.errors import WebError
from tpscalc.web.params import Controls

REPORT_CACHE_SIZE = 512  # reports kept in memory (~0.5 MB each at 850 rows)


def model_builder() -> Callable[..., Any]:
    """tpscalc.report.build_model_report (a seam tests replace)."""
    from tpscalc.report import build_model_report

    return build_model_report


def card_builder() -> Callable[..., Any]:
    """tpscalc.report.build_card_report (a seam tests replace)."""
    from tpscalc.report import build_card_report

    return build_card_report


def _input_error(exc: Exception) -> WebError:
    return WebError(400, "bad_input", str(exc))


def find_model(slug: str) -> Any:
    """The model with this slug (or a name resolving to one), else WebError 404 with suggestions."""
    try:
        return get_model(slug)
    except NameNotFoundError as exc:
        raise WebError(404, "unknown_model", str(exc), exc.suggestions) from None


def find_card(slug: str) -> Any:
    """The card with this slug (or a name resolving to one), else WebError 404 with suggestions."""
    try:
        return get_card(slug)
    except NameNotFoundError as exc:
        raise WebError(404, "unknown_card", str(exc), exc.suggestions) from None


@lru_cache(maxsize=REPORT_CACHE_SIZE)
def model_report(slug: str, controls: Controls, lang: str) -> dict[str, Any]:
    """The model report as the JSON API returns it (and the HTML page renders it)."""
    return _built(model_builder(), find_model(slug), lang, controls,
                  min_memory_gib=controls.min_memory_gib, max_memory_gib=controls.max_memory_gib)


@lru_cache(maxsize=REPORT_CACHE_SIZE)
def card_report(slug: str, controls: Controls, lang: str) -> dict[str, Any]:
    """The card report as the JSON API returns it (and the HTML page renders it)."""
    return _built(card_builder(), find_card(slug), lang, controls, sort=controls.sort)


def _built(builder: Callable[..., Any], subject: Any, lang: str, controls: Controls,
           **extra: Any) -> dict[str, Any]:
    """`builder(subject, ...)` with the controls both reports take, as a dict; WebError 400 on bad input."""
    try:
        report = builder(subject, context=controls.context, min_quality=controls.min_quality,
                         search=controls.search, show_all=controls.show_all,
                         backend=controls.backend, lang=lang, **extra)
    except ValueError as exc:  # EstimateInputError and friends: the user's input, not our bug
        raise _input_error(exc) from None
    out: dict[str, Any] = report.to_json()
    return out


def clear_cache() -> None:
    """Forget cached reports (tests; after the catalog changes)."""
    model_report.cache_clear()
    card_report.cache_clear()


def catalog_sizes() -> tuple[int, int]:
    """(models, cards) in the catalog."""
    return len(store.models()), len(store.cards())
