"""The Python API: one estimate as a dict, and the two reports as data.

Every function parses its keyword arguments with the same rules as the site and the CLI
(`tpscalc.report.request`), so a value the site refuses is refused here with the same message.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tpscalc.catalog import get_card, get_model
from tpscalc.catalog.lookup import NameNotFoundError
from tpscalc.estimate.query import DEFAULT_CONTEXT, EstimateInputError, Rig
from tpscalc.report import card_report as card_builder
from tpscalc.report import common
from tpscalc.report import model_report as model_builder
from tpscalc.report.common import estimate_json
from tpscalc.report.request import (
    CARD_REPORT_PARAMS,
    ESTIMATE_PARAMS,
    MODEL_REPORT_PARAMS,
    parse_quant,
    parse_request,
    parse_tokens,
)
from tpscalc.report.serialize import report_json
from tpscalc.report.types import CardReport, ModelReport

# Exception types that mean bad user input (one line and exit code 2 in the CLI, 4xx on the web).
INPUT_ERRORS: tuple[type[Exception], ...] = (EstimateInputError, NameNotFoundError)

__all__ = ["INPUT_ERRORS", "card_report", "evaluate", "evaluate_many", "model_report",
           "report_json"]


def evaluate(model: str, card: str, quant: str | None = None, context: object = DEFAULT_CONTEXT,
             backend: str | None = None, kv_type: str | None = "f16",
             **opts: object) -> dict[str, Any]:
    """`model` on `card`: memory (GiB), fit, decode and prefill speed (tok/s); raises on bad input.

    opts: min_quality and max_quality bound the quantization chosen when `quant` is not given.
    """
    raw = {"context": context, "backend": backend, "kv_type": kv_type, **opts}
    request = parse_request(raw, ESTIMATE_PARAMS, strict=True)
    fixed = parse_quant(quant)
    m, c = get_model(model), get_card(card)
    result = common.default_engine().estimate(m, Rig.of(c), request.query, fixed)
    return estimate_json(result)


def evaluate_many(requests: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One dict per request (keys model, card or gpu, quant, context, backend, kv_type), in
    order; a request with bad input gets its message under `error` and empty figures."""
    out = []
    for req in requests:
        try:
            out.append(evaluate(str(req.get("model") or ""), str(_card_of(req) or ""),
                                quant=req.get("quant") or None,
                                context=req.get("context") or DEFAULT_CONTEXT,
                                backend=req.get("backend") or None,
                                kv_type=req.get("kv_type") or "f16"))
        except INPUT_ERRORS as exc:
            out.append(_error_row(req, str(exc)))
    return out


def _card_of(req: Mapping[str, Any]) -> Any:
    """The card a request names: `card`, or its alias `gpu`."""
    return req.get("card") or req.get("gpu")


def _context_or_none(raw: object) -> int | None:
    """The context of a failed request as a whole number, as good rows give it (None if bad)."""
    try:
        return parse_tokens(raw) if raw not in (None, "") else DEFAULT_CONTEXT
    except EstimateInputError:
        return None


def _error_row(req: Mapping[str, Any], message: str) -> dict[str, Any]:
    """The estimate shape with every figure empty and `error` set."""
    return {"model": req.get("model"), "gpu": _card_of(req), "quant": req.get("quant") or None,
            "context": _context_or_none(req.get("context")),
            "backend": req.get("backend") or None,
            "memory": None, "fits": None, "fit": None, "decode": None, "prefill": None,
            "short_by_gib": None, "error": message}


def model_report(name: str, **opts: object) -> ModelReport:
    """The model report (every card).

    Options as `tpscalc model` (context, min_quality, lang, ...).
    """
    request = parse_request(opts, MODEL_REPORT_PARAMS, strict=True)
    return model_builder.model_report(name, request)


def card_report(name: str, **opts: object) -> CardReport:
    """The card report (every model).

    Options as `tpscalc card` (context, min_quality, sort, ...).
    """
    request = parse_request(opts, CARD_REPORT_PARAMS, strict=True)
    return card_builder.card_report(name, request)
