"""The JSON API under /api/v1/: the same report objects the HTML pages render.

Report parameters are parsed from the query string with the one request definition
(`tpscalc.report.request`); their OpenAPI description is generated from it too.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import APIRouter, Request, Response

from tpscalc import api
from tpscalc.catalog.quants import all_quantizations
from tpscalc.report.request import (
    CARD_RIG_REPORT_PARAMS,
    ESTIMATE_PARAMS,
    MAX_MEMORY_GIB,
    MODEL_RIG_REPORT_PARAMS,
    ReportRequest,
    openapi_parameters,
)
from tpscalc.report.rigs import is_rig_text
from tpscalc.web import conditional, indexes, reports
from tpscalc.web.errors import WebError
from tpscalc.web.params import quant_from, request_from

router = APIRouter(prefix="/api/v1", tags=["api"])


def only_documented(request: Request, parameters: Sequence[dict[str, Any]]) -> None:
    """WebError 400 for a query parameter the API does not document, one given twice, or an
    empty value where the document wants a number or a choice: a typo or a second value is
    never silently ignored."""
    known = {p["name"]: p["schema"] for p in parameters}
    seen: set[str] = set()
    for key, value in request.query_params.multi_items():
        if key not in known:
            raise WebError(400, "unknown_parameter",
                           f"unknown parameter {key[:80]!r}; use {', '.join(sorted(known))}")
        if key in seen:
            raise WebError(400, "repeated_parameter", f"parameter {key!r} is given twice")
        schema = known[key]
        free_text = schema.get("type") == "string" and "enum" not in schema
        if value == "" and not (free_text and not schema.get("minLength")):
            raise WebError(400, f"bad_{key}", f"parameter {key!r} is empty")
        seen.add(key)


def _text_param(name: str, description: str, required: bool = False) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": required, "description": description,
            "schema": {"type": "string", "minLength": 1 if required else 0}}


def _extra(parameters: list[dict[str, Any]]) -> dict[str, Any]:
    return {"parameters": parameters}


def _number(name: str, description: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "description": description,
            "schema": {"type": "number", "minimum": 0, "maximum": MAX_MEMORY_GIB}}


def _year(name: str, description: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "description": description,
            "schema": {"type": "integer", "minimum": 1900, "maximum": 2100}}


MODEL_LIST_PARAMS = [
    _text_param("search", "Only models whose name contains this text."),
    _text_param("organization", "Only models from this organization."),
    _number("min_params", "At least this many billion parameters."),
    _number("max_params", "At most this many billion parameters."),
    _year("since", "Published in this year or later."),
    _year("until", "Published in this year or earlier."),
]
CARD_LIST_PARAMS = [
    _text_param("search", "Only cards whose name contains this text."),
    _text_param("vendor", "Only cards from this vendor (NVIDIA, AMD, Intel, Apple)."),
    _number("min_memory", "At least this much memory, GiB."),
    _number("max_memory", "At most this much memory, GiB."),
]
JSON_OBJECT: dict[int | str, dict[str, Any]] = {
    200: {"description": "The report",
          "content": {"application/json": {"schema": {"type": "object"}}}}}


@router.get("/models", summary="List models (search, organization, size in billions, year range)",
            openapi_extra=_extra(MODEL_LIST_PARAMS))
def api_models(request: Request) -> dict[str, Any]:
    """Models matching the filters, newest first."""
    only_documented(request, MODEL_LIST_PARAMS)
    rows = indexes.list_models(indexes.parse_model_filters(request.query_params))
    return {"count": len(rows), "models": rows}


@router.get("/cards", summary="List cards (search, vendor, memory range in GiB)",
            openapi_extra=_extra(CARD_LIST_PARAMS))
def api_cards(request: Request) -> dict[str, Any]:
    """Cards matching the filters, most bandwidth first."""
    only_documented(request, CARD_LIST_PARAMS)
    rows = indexes.list_cards(indexes.parse_card_filters(request.query_params))
    return {"count": len(rows), "cards": rows}


# The documented query parameters of the two report routes, built once: the OpenAPI document
# and the check of each request use the same lists.
MODEL_REPORT_DOC = openapi_parameters(MODEL_RIG_REPORT_PARAMS)
CARD_REPORT_DOC = openapi_parameters(CARD_RIG_REPORT_PARAMS)


@router.get(
    "/models/{slug}",
    summary="The model report: this model on every card",
    openapi_extra=_extra(MODEL_REPORT_DOC),
    responses=JSON_OBJECT,
)
def api_model(slug: str, request: Request) -> Response:
    """The model report's JSON (the HTML model page renders the same object)."""
    only_documented(request, MODEL_REPORT_DOC)
    asked: ReportRequest = request_from(request.query_params, MODEL_RIG_REPORT_PARAMS)
    body = reports.model_report_bytes(reports.find_model(slug).slug, asked)
    return conditional.json_response(request, body)


@router.get(
    "/cards/{slug}",
    summary="The card report: every model on this card",
    openapi_extra=_extra(CARD_REPORT_DOC),
    responses=JSON_OBJECT,
)
def api_card(slug: str, request: Request) -> Response:
    """The card report's JSON (the HTML card page renders the same object)."""
    only_documented(request, CARD_REPORT_DOC)
    asked = request_from(request.query_params, CARD_RIG_REPORT_PARAMS)
    body = reports.card_report_bytes(reports.find_card(slug).slug, asked)
    return conditional.json_response(request, body)


ESTIMATE_DOC = [
    _text_param("model", "Model name or slug.", required=True),
    _text_param("card", "Card name or slug.", required=True),
    {**_text_param("gpu", "The same as `card` (an alias kept for old links)."),
     "deprecated": True, "schema": {"type": "string", "minLength": 1}},
    {**_text_param("quant", "Quantization (default: the least compressed that fits)."),
     "schema": {"type": "string", "enum": [q.name for q in all_quantizations()]}},
    *openapi_parameters(ESTIMATE_PARAMS),
]


@router.get("/estimate", summary="One model on one card", openapi_extra=_extra(ESTIMATE_DOC))
def api_estimate(request: Request) -> dict[str, Any]:
    """Memory, fit and speed of `model` on `card` (quantization chosen when not given)."""
    params = request.query_params
    only_documented(request, ESTIMATE_DOC)
    model_name, card_name = params.get("model"), params.get("card") or params.get("gpu")
    if not model_name or not card_name:
        missing = "model" if not model_name else "card"
        raise WebError(400, f"missing_{missing}", f"give {missing}= (a name or slug)")
    m = reports.find_model(model_name)
    request_from(params, ESTIMATE_PARAMS)  # a bad value is a 400 with its field's code
    # the name as given when it is not the catalog's own: the answer says how it was resolved
    named = m.slug if model_name in (m.slug, m.name) else model_name
    # A rig ("2x NAME", "A + B", "none") is resolved by the API; an unknown card in it is a 400.
    # A name as typed stays as typed, for the answer to say how it was read ("M4 Max": one of
    # the chip's GPU configurations, the others named in `notes`).
    card = None if is_rig_text(card_name) else reports.find_card(card_name)
    target = card.slug if card is not None and card_name in (card.slug, card.name) else card_name
    try:
        # Every documented field goes through whole (the speed test's depth, n_prompt, n_gen,
        # flash_attn and n_ubatch too), parsed by the same rules as the Python API's.
        return api.evaluate(named, target, quant=quant_from(params.get("quant")),
                            **api.estimate_options(params))
    except api.INPUT_ERRORS as exc:
        raise WebError(400, "bad_input", str(exc)) from None
