"""The JSON API under /api/v1/: the same report objects the HTML pages render.

Report parameters are parsed from the query string with the one request definition
(`tpscalc.report.request`); their OpenAPI description is generated from it too.
"""
from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from tpscalc import api
from tpscalc.report.request import (
    CARD_REPORT_PARAMS,
    ESTIMATE_PARAMS,
    MODEL_REPORT_PARAMS,
    ReportRequest,
    openapi_parameters,
)
from tpscalc.web import indexes, reports
from tpscalc.web.errors import WebError
from tpscalc.web.params import quant_from, request_from

router = APIRouter(prefix="/api/v1", tags=["api"])
Text = str | None


def _text_param(name: str, description: str, required: bool = False) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": required, "description": description,
            "schema": {"type": "string", "minLength": 1 if required else 0}}


def _extra(parameters: list[dict[str, Any]]) -> dict[str, Any]:
    return {"parameters": parameters}


@router.get("/models", summary="List models (search, organization, size in billions, year range)")
def api_models(
    request: Request,
    search: Text = None,
    organization: Text = None,
    min_params: Text = None,
    max_params: Text = None,
    since: Text = None,
    until: Text = None,
) -> dict[str, Any]:
    """Models matching the filters, newest first."""
    rows = indexes.list_models(indexes.parse_model_filters(request.query_params))
    return {"count": len(rows), "models": rows}


@router.get("/cards", summary="List cards (search, vendor, memory range in GiB)")
def api_cards(
    request: Request,
    search: Text = None,
    vendor: Text = None,
    min_memory: Text = None,
    max_memory: Text = None,
) -> dict[str, Any]:
    """Cards matching the filters, most bandwidth first."""
    rows = indexes.list_cards(indexes.parse_card_filters(request.query_params))
    return {"count": len(rows), "cards": rows}


@router.get(
    "/models/{slug}",
    summary="The model report: this model on every card",
    openapi_extra=_extra(openapi_parameters(MODEL_REPORT_PARAMS)),
)
def api_model(slug: str, request: Request) -> dict[str, Any]:
    """The model report's JSON (the HTML model page renders the same object)."""
    asked: ReportRequest = request_from(request.query_params, MODEL_REPORT_PARAMS)
    return reports.model_report(reports.find_model(slug).slug, asked)


@router.get(
    "/cards/{slug}",
    summary="The card report: every model on this card",
    openapi_extra=_extra(openapi_parameters(CARD_REPORT_PARAMS)),
)
def api_card(slug: str, request: Request) -> dict[str, Any]:
    """The card report's JSON (the HTML card page renders the same object)."""
    asked = request_from(request.query_params, CARD_REPORT_PARAMS)
    return reports.card_report(reports.find_card(slug).slug, asked)


@router.get(
    "/estimate",
    summary="One model on one card",
    openapi_extra=_extra(
        [
            _text_param("model", "Model name or slug.", required=True),
            _text_param(
                "card", "Card name or slug (`gpu` is accepted as an alias).", required=True
            ),
            _text_param("quant", "Quantization (default: the least compressed that fits)."),
        ]
        + openapi_parameters(ESTIMATE_PARAMS)
    ),
)
def api_estimate(request: Request) -> dict[str, Any]:
    """Memory, fit and speed of `model` on `card` (quantization chosen when not given)."""
    params = request.query_params
    model_name, card_name = params.get("model"), params.get("card") or params.get("gpu")
    if not model_name or not card_name:
        missing = "model" if not model_name else "card"
        raise WebError(400, f"missing_{missing}", f"give {missing}= (a name or slug)")
    m, card = reports.find_model(model_name), reports.find_card(card_name)
    asked = request_from(params, ESTIMATE_PARAMS)
    q = asked.query
    try:
        return api.evaluate(
            m.slug,
            card.slug,
            quant=quant_from(params.get("quant")),
            context=q.context,
            backend=q.backend,
            kv_type=q.kv_type,
            min_quality=q.min_quality,
            max_quality=q.max_quality,
        )
    except api.INPUT_ERRORS as exc:
        raise WebError(400, "bad_input", str(exc)) from None
