"""The Python API: one estimate as a dict, and the two reports as objects with `to_json()`."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from tpscalc.estimate.engine import DEFAULT_CONTEXT, check_context

if TYPE_CHECKING:
    from tpscalc.report.card_report import CardReport
    from tpscalc.report.model_report import ModelReport


def estimate(model: str, gpu: str, quant: str | None = None, context: int = DEFAULT_CONTEXT,
             backend: str | None = None, kv_type: str = "f16", *, n_prompt: int | None = None,
             n_gen: int | None = None, depth: int | None = None, flash_attn: bool = True,
             n_ubatch: int = 512) -> dict[str, Any]:
    """`model` on `gpu`: memory (GiB), fit, decode and prefill speed (tok/s); raises on bad input.

    n_prompt, n_gen, depth, flash_attn, n_ubatch: as llama-bench's -p -n -d -fa -ub (decode is
    generating n_gen tokens after depth cached ones; prefill is n_prompt tokens after depth).
    """
    from tpscalc.catalog import get_card, get_model
    from tpscalc.estimate.bench import speed_test
    from tpscalc.report import common
    from tpscalc.report.common import estimate_json

    check_context(context)
    test = speed_test(context, n_prompt, n_gen, depth, flash_attn, n_ubatch)
    quant = _any_quant(quant or None)
    m, card = get_model(model), get_card(gpu)
    result = common.engine().estimate(m, card, quant=quant, context=context,
                                      backend=backend or None, kv_type=kv_type or "f16",
                                      test=test)
    return estimate_json(result)


def _any_quant(name: str | None) -> str | None:
    """A quantization on the ladder, else any GGUF type the catalog knows (Q4_0, F16, MXFP4:
    replayed llama-bench rows use them), else the ladder's UnknownQuantizationError."""
    from tpscalc.catalog.quants import UnknownQuantizationError, get_quant
    from tpscalc.report import common

    try:
        return common.check_quant(name)
    except UnknownQuantizationError:
        try:
            return get_quant(name or "").name
        except UnknownQuantizationError:
            pass
        raise


# Optional request keys that set the speed test (llama-bench -p -n -d -fa -ub), and a bool.
TEST_KEYS = ("n_prompt", "n_gen", "depth", "n_ubatch")


def _flag(value: Any) -> bool:
    """A CSV or JSON flag: 1/0, true/false, yes/no, on/off (empty: on, llama.cpp's -fa auto)."""
    text = str(value).strip().lower()
    if text in ("", "1", "true", "yes", "on", "auto", "-1"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"flash_attn {value!r} is not 0/1, true/false, yes/no or on/off")


def _test_args(req: Mapping[str, Any]) -> dict[str, Any]:
    """n_prompt, n_gen, depth, n_ubatch (whole numbers) and flash_attn from a request's keys."""
    out: dict[str, Any] = {}
    for key in TEST_KEYS:
        value = req.get(key)
        if value is not None and str(value).strip() != "":
            try:
                out[key] = int(str(value).strip())
            except ValueError:
                raise ValueError(f"{key} {value!r} is not a whole number") from None
    if req.get("flash_attn") is not None:
        out["flash_attn"] = _flag(req.get("flash_attn"))
    return out


def estimate_many(requests: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One dict per request, in order; a bad one gets `error`.

    Keys: model, gpu, quant, context, backend; optional kv_type and the speed test n_prompt,
    n_gen, depth, flash_attn, n_ubatch (llama-bench's -p -n -d -fa -ub). Without a context, a
    request with a test gets one that holds it (depth + the longer of n_prompt and n_gen).
    """
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
            test = _test_args(req)
        except ValueError as exc:
            out.append(_error_row(req, str(exc)))
            continue
        if not str(req.get("context") or "").strip():  # replaying a test: room for all of it
            needed = test.get("depth", 0) + max(test.get("n_prompt", 0), test.get("n_gen", 0))
            context = max(context, needed)
        try:
            out.append(estimate(str(req.get("model") or ""), str(req.get("gpu") or ""),
                                quant=req.get("quant") or None, context=context,
                                backend=req.get("backend") or None,
                                kv_type=req.get("kv_type") or "f16", **test))
        except errors as exc:
            out.append(_error_row(req, str(exc)))
    return out


def _error_row(req: Mapping[str, Any], message: str) -> dict[str, Any]:
    """The estimate shape with every figure empty and `error` set."""
    return {"model": req.get("model"), "gpu": req.get("gpu"), "quant": req.get("quant") or None,
            "context": req.get("context"), "backend": req.get("backend") or None,
            "memory": None, "fits": None, "fit": None, "decode": None, "prefill": None,
            "short_by_gib": None, "test": None, "measured": None, "error": message}


def model_report(name: str, **opts: Any) -> ModelReport:
    """The model report (every card); options as `tpscalc model` (context, min_quality, lang, ...)."""
    from tpscalc.report.model_report import build_model_report

    return build_model_report(name, **opts)


def card_report(name: str, **opts: Any) -> CardReport:
    """The card report (every model); options as `tpscalc card` (context, min_quality, sort, ...)."""
    from tpscalc.report.card_report import build_card_report

    return build_card_report(name, **opts)
