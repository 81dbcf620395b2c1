"""The one seam to the report builder: model and card reports as JSON-ready dicts, cached."""
from __future__ import annotations

import functools
import json
import pickle
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from tpscalc.catalog import NameNotFoundError, match_card, store
from tpscalc.catalog.schema import Card, Model
from tpscalc.estimate.query import EstimateInputError, query_for_model
from tpscalc.report.request import ReportRequest
from tpscalc.report.serialize import report_json
from tpscalc.web.cache import ByteLRU
from tpscalc.web.errors import WebError

# Reports kept as bytes: compact JSON for the API, pickled data for the pages (see _data).
# 48 MiB holds about 150 of the largest (a model on all 850 cards is ~330 kB as JSON, a rig
# report 1.2 MB as JSON, 0.25 MB pickled) and thousands of filtered ones;
# `benchmarks/memory_soak.py` measures it.
REPORT_CACHE_BYTES = 48 * 2**20
CACHE: ByteLRU[bytes] = ByteLRU(REPORT_CACHE_BYTES)
PICKLED = "pickled"  # the last part of a page's key: its report's data pickled


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
        return _resolved(slug)
    except NameNotFoundError as exc:
        raise WebError(404, "unknown_model", str(exc), exc.suggestions) from None


@functools.lru_cache(maxsize=1024)
def _resolved(slug: str) -> Model:
    """The model a name resolves to, kept for the names last asked (each request of a page or
    the API looks its model up, ~0.8 ms over the whole catalog); an unknown name is not kept."""
    from tpscalc.sources.load import resolve_name  # with llmfit's repositories sized from it

    return resolve_name(slug).model


def find_card(slug: str) -> Card:
    """The card with this slug (or a name resolving to one), else WebError 404 with suggestions."""
    try:  # "M4 Max": the base GPU configuration (its page names itself; the API's answer
        return match_card(slug).card  # says so in `notes`)
    except NameNotFoundError as exc:
        raise WebError(404, "unknown_card", str(exc), exc.suggestions) from None


def _whole(request: ReportRequest) -> ReportRequest:
    """The request with the page left out: a report holds every row, the page slices it."""
    if request.filters.page == 1:
        return request
    return replace(request, filters=replace(request.filters, page=1))


def _cached(key: tuple[str, str, ReportRequest], build: Callable[[], Any]) -> bytes:
    """The report under `key` as compact JSON bytes (what the API sends and tags), built
    (single-flight) and kept when absent: from the data a page kept, else built."""
    def make() -> bytes:
        pickled = CACHE.get((*key, PICKLED))
        data = report_json(build()) if pickled is None else pickle.loads(pickled)
        return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()

    return CACHE.get_or_make(key, make)


def _data(key: tuple[str, str, ReportRequest], build: Callable[[], Any]) -> dict[str, Any]:
    """The report under `key` as the JSON API's data (what the pages render).

    A page never reads the JSON text, so it keeps the data pickled under a key of its own
    (pickling a rig report's 1.2 MB of JSON data takes ~1.5 ms and reading it back ~2 ms,
    against ~20 ms to encode it as JSON and ~16 ms to decode it): from the API's JSON when that
    is kept, else built. The call that built it reads its data as it is."""
    made: list[dict[str, Any]] = []

    def make() -> bytes:
        raw = CACHE.get(key)
        data = report_json(build()) if raw is None else json.loads(raw)
        made.append(data)
        # only this process's own report data is ever unpickled (never bytes from outside)
        return pickle.dumps(data, pickle.HIGHEST_PROTOCOL)

    pickled = CACHE.get_or_make((*key, PICKLED), make)
    if made:
        return made[0]
    out: dict[str, Any] = pickle.loads(pickled)
    return out


def _model_key(slug: str, request: ReportRequest) -> tuple[str, str, ReportRequest]:
    return ("model", slug, for_model(find_model(slug), _whole(request)))


def model_report_bytes(slug: str, request: ReportRequest) -> bytes:
    """The model report as compact JSON bytes (what the JSON API sends), cached."""
    key = _model_key(slug, request)
    return _cached(key, lambda: model_builder()(find_model(slug), key[2]))


def for_model(model: Model, request: ReportRequest) -> ReportRequest:
    """`request` checked against the model's context limit (the default lowered to it), or 400."""
    try:
        return replace(request, query=query_for_model(model, request.query))
    except EstimateInputError as exc:
        raise WebError(400, exc.code, str(exc)) from None


def card_report_bytes(slug: str, request: ReportRequest) -> bytes:
    """The card report as compact JSON bytes (what the JSON API sends), cached."""
    request = _whole(request)
    return _cached(("card", slug, request), lambda: card_builder()(find_card(slug), request))


def model_report(slug: str, request: ReportRequest) -> dict[str, Any]:
    """The model report as the JSON API returns it (and the HTML page renders it)."""
    key = _model_key(slug, request)
    if _PRIMED and (primed := _PRIMED.get(key)) is not None:
        return primed
    return _data(key, lambda: model_builder()(find_model(slug), key[2]))


def card_report(slug: str, request: ReportRequest) -> dict[str, Any]:
    """The card report as the JSON API returns it (and the HTML page renders it)."""
    key = ("card", slug, _whole(request))
    if _PRIMED and (primed := _PRIMED.get(key)) is not None:
        return primed
    return _data(key, lambda: card_builder()(find_card(slug), key[2]))


# The static export's reports, kept as the JSON API's data (report_json) from prime to forget:
# its pages read them as they are, without the encoding and decoding a cached report's bytes
# cost (a fifth of the export's CPU).
_PRIMED: dict[tuple[str, str, ReportRequest], dict[str, Any]] = {}


def prime(kind: str, slug: str, request: ReportRequest, languages: Sequence[str]) -> None:
    """Build the `kind` ("model" or "card") report of `slug` in every language at once.

    The estimates are made once (only the texts depend on the language) and each language's
    report is kept as the API's data until `forget`, where `model_report` / `card_report` find
    it."""
    request = _whole(request)
    if kind == "model":  # the key model_report_bytes looks under: within the model's limit
        request = for_model(find_model(slug), request)
        from tpscalc.report.model_report import build_model_reports

        built: Sequence[Any] = build_model_reports(find_model(slug), request, languages)
    else:
        from tpscalc.report.card_report import build_card_reports

        built = build_card_reports(find_card(slug), request, languages)
    for lang, report in zip(languages, built, strict=True):
        # a JSON round trip's data: JSON's own types (the pages read the API's data)
        _PRIMED[(kind, slug, replace(request, lang=lang))] = report_json(report)


def forget(kind: str, slug: str, request: ReportRequest) -> None:
    """Drop one primed or cached report (the export, once it has written its page)."""
    request = _whole(request)
    if kind == "model":
        request = for_model(find_model(slug), request)
    _PRIMED.pop((kind, slug, request), None)
    CACHE.pop((kind, slug, request))
    CACHE.pop((kind, slug, request, PICKLED))


def clear_cache() -> None:
    """Forget cached reports and the pages rendered from them (tests; after catalog changes)."""
    from tpscalc.web import page_cache

    CACHE.clear()
    _PRIMED.clear()
    _resolved.cache_clear()
    page_cache.clear()


def catalog_sizes() -> tuple[int, int]:
    """(models, cards) in the catalog."""
    return len(store.models()), len(store.cards())
