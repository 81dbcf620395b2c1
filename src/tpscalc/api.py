"""The Python API: one estimate as a dict, and the two reports as objects with `to_json()`."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from tpscalc.estimate.engine import DEFAULT_CONTEXT, check_context

if TYPE_CHECKING:
    from tpscalc.report.card_report import CardReport
    from tpscalc.report.model_report import ModelReport


def estimate(model: str, gpu: str, quant: str | None = None, context: int = DEFAULT_CONTEXT,
             backend: str | None = None, kv_type: str = "f16",
             text_only: bool = False) -> dict[str, Any]:
    """`model` on `gpu`: memory (GiB), fit, decode and prefill speed (tok/s); raises on bad input.
    `text_only` leaves a vision-language model's image encoder (mmproj) out of memory."""
    from tpscalc.catalog import get_card, get_model
    from tpscalc.report import common
    from tpscalc.report.common import estimate_json

    check_context(context)
    quant = common.check_quant(quant or None)
    m, card = get_model(model), get_card(gpu)
    extra = {"text_only": True} if text_only else {}  # fake engines in tests may lack it
    result = common.engine().estimate(m, card, quant=quant, context=context,
                                      backend=backend or None, kv_type=kv_type or "f16", **extra)
    return estimate_json(result)


def estimate_many(requests: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One dict per request (keys model, gpu, quant, context, backend, optional kv_type), in order; a bad one gets `error`."""
    from tpscalc.report.common import input_errors

    errors = input_errors()
    out = []
    for req in requests:
        try:
            context = int(req.get("context") or DEFAULT_CONTEXT)
        except (TypeError, ValueError):
            out.append(_error_row(req, f"context {req.get('context')!r} is not a whole number"))
            continue
        try:
            out.append(estimate(str(req.get("model") or ""), str(req.get("gpu") or ""),
                                quant=req.get("quant") or None, context=context,
                                backend=req.get("backend") or None,
                                kv_type=req.get("kv_type") or "f16",
                                text_only=_truthy(req.get("text_only"))))
        except errors as exc:
            out.append(_error_row(req, str(exc)))
    return out


def _truthy(value: Any) -> bool:
    """A CSV/JSON flag: 1, true or yes (any case) is true."""
    return str(value or "").strip().lower() in ("1", "true", "yes")


def _error_row(req: Mapping[str, Any], message: str) -> dict[str, Any]:
    """The estimate shape with every figure empty and `error` set."""
    return {"model": req.get("model"), "gpu": req.get("gpu"), "quant": req.get("quant") or None,
            "context": req.get("context"), "backend": req.get("backend") or None,
            "memory": None, "fits": None, "fit": None, "decode": None, "prefill": None,
            "short_by_gib": None, "error": message}


def model_report(name: str, **opts: Any) -> ModelReport:
    """The model report (every card); options as `tpscalc model` (context, min_quality, lang, ...)."""
    from tpscalc.report.model_report import build_model_report

    return build_model_report(name, **opts)


def card_report(name: str, **opts: Any) -> CardReport:
    """The card report (every model); options as `tpscalc card` (context, min_quality, sort, ...)."""
    from tpscalc.report.card_report import build_card_report

    return build_card_report(name, **opts)
