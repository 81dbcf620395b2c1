"""The JSON API under /api/v1/: the same report objects the HTML pages render."""
from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request

from tpscalc import api
from tpscalc.i18n import DEFAULT_LANGUAGE, LANGUAGES
from tpscalc.web import indexes, reports
from tpscalc.web.errors import WebError
from tpscalc.web.params import parse_choice, parse_context, parse_controls, parse_quant

router = APIRouter(prefix="/api/v1", tags=["api"])
Text = str | None


def _lang(raw: str | None) -> str:
    if raw in (None, ""):
        return DEFAULT_LANGUAGE
    if raw not in LANGUAGES:
        raise WebError(400, "unknown_language", f"unknown language {raw!r}; use one of {', '.join(LANGUAGES)}")
    return raw


@router.get("/models", summary="List models (search, organization, size in billions, year range)")
def api_models(request: Request, search: Text = None, organization: Text = None, min_params: Text = None,
               max_params: Text = None, since: Text = None, until: Text = None) -> dict[str, Any]:
    """Models matching the filters, newest first."""
    rows = indexes.list_models(indexes.parse_model_filters(request.query_params))
    return {"count": len(rows), "models": rows}


@router.get("/cards", summary="List cards (search, vendor, memory range in GiB)")
def api_cards(request: Request, search: Text = None, vendor: Text = None, min_memory: Text = None,
              max_memory: Text = None) -> dict[str, Any]:
    """Cards matching the filters, most bandwidth first."""
    rows = indexes.list_cards(indexes.parse_card_filters(request.query_params))
    return {"count": len(rows), "cards": rows}


@router.get("/models/{slug}", summary="The model report: this model on every card")
def api_model(slug: str, request: Request, context: Text = None, min_quality: Text = None,
              min_memory: Text = None, max_memory: Text = None, search: Text = None,
              all: Text = None, backend: Text = None, lang: Text = None) -> dict[str, Any]:
    """The model report's JSON (the HTML model page renders the same object)."""
    controls = parse_controls(request.query_params)
    return reports.model_report(reports.find_model(slug).slug, controls, _lang(lang))


@router.get("/cards/{slug}", summary="The card report: every model on this card")
def api_card(slug: str, request: Request, context: Text = None, min_quality: Text = None,
             search: Text = None, sort: Text = None, lang: Text = None) -> dict[str, Any]:
    """The card report's JSON (the HTML card page renders the same object)."""
    controls = parse_controls(request.query_params)
    return reports.card_report(reports.find_card(slug).slug, controls, _lang(lang))


@router.get("/estimate", summary="One model on one card")
def api_estimate(model: str = Query(min_length=1), gpu: str = Query(min_length=1), quant: Text = None,
                 context: Text = None, backend: Text = None, text_only: Text = None) -> dict[str, Any]:
    """Memory, fit and speed of `model` on `gpu` (quantization chosen when not given;
    text_only=true leaves a vision-language model's image encoder out)."""
    from tpscalc.web.params import BACKENDS

    m, card = reports.find_model(model), reports.find_card(gpu)
    tokens, q = parse_context(context), parse_quant(quant, code="bad_quant")
    be = parse_choice(backend, BACKENDS, "backend", None)
    text = parse_choice(text_only, ("true", "false", "1", "0"), "text_only", "false")
    return estimate_json(m, card, q, tokens, be, text in ("true", "1"))


def estimate_json(model: Any, card: Any, quant: str | None, context: int, backend: str | None,
                  text_only: bool = False) -> dict[str, Any]:
    """The estimate as the Python API (tpscalc.api.estimate) gives it; WebError 400 on bad input."""
    try:
        return api.estimate(model.slug, card.slug, quant=quant, context=context, backend=backend,
                            text_only=text_only)
    except ValueError as exc:
        raise WebError(400, "bad_input", str(exc)) from None
