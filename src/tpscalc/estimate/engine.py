"""PROVISIONAL engine facade: simple formulas so reports and the site can be built in parallel.

Replaced by the composition of weights/memory/fit/speed with the same signatures.
"""
from __future__ import annotations

from collections.abc import Sequence

from tpscalc.catalog.schema import Card, Model
from tpscalc.estimate.types import DecodeEstimate, Estimate, MemoryBreakdown, PrefillEstimate

DEFAULT_CONTEXT = 4096
MAX_CONTEXT = 10_000_000
GIB = 2**30
_LADDER = (("F16", 16.0), ("Q8_0", 8.5), ("Q6_K", 6.56), ("Q5_K_M", 5.69), ("Q4_K_M", 4.89),
           ("IQ4_XS", 4.25), ("Q3_K_M", 3.91), ("Q2_K", 3.35))


class EstimateInputError(ValueError):
    """Bad input to the engine: context out of range, unknown quantization."""


def _check(context: int, quant: str | None) -> None:
    if not isinstance(context, int) or context <= 0 or context > MAX_CONTEXT:
        raise EstimateInputError(f"context must be between 1 and {MAX_CONTEXT:,} tokens")
    if quant is not None and quant.upper() not in dict(_LADDER):
        raise EstimateInputError(f"unknown quantization {quant!r}; use one of "
                                 + ", ".join(q for q, _ in _LADDER))


def memory_at(model: Model, quant: str, context: int) -> MemoryBreakdown:
    """Memory needed for `model` at `quant` and `context` tokens, GiB."""
    _check(context, quant)
    bits = dict(_LADDER)[quant.upper()]
    weights = model.parameters_total * bits / 8 / GIB
    arch = model.architecture
    if arch:
        kv = 2 * arch.num_layers * arch.num_kv_heads * arch.head_dim * 2 * context / GIB
    else:
        kv = 0.5 * (model.parameters_total / 7e9) * context / 4096
    runtime = 0.5
    return MemoryBreakdown(weights, kv, runtime, weights + kv + runtime, arch is None)


def _one(model: Model, card: Card, quant: str | None, context: int, backend: str | None,
         min_quality: str | None) -> Estimate:
    names = [q for q, _ in _LADDER]
    floor = names.index(min_quality.upper()) if min_quality else len(names) - 1
    candidates = [quant.upper()] if quant else names[: floor + 1]
    usable = card.usable_memory_gib
    chosen = next((q for q in candidates if memory_at(model, q, context).total_gib <= usable), None)
    mem = memory_at(model, chosen or candidates[-1], context)
    be = backend or {"NVIDIA": "cuda", "AMD": "rocm", "Apple": "metal"}.get(card.vendor, "vulkan")
    if chosen is None:
        return Estimate(model.name, card.name, None, context, be, mem, usable, False, "no",
                        None, None, round(mem.total_gib - usable, 2))
    tps = 0.5 * card.bandwidth_gb_s * 1e9 / ((mem.weights_gib + mem.kv_cache_gib) * GIB)
    decode = DecodeEstimate(tps, tps * 0.8, tps * 1.25, "low", "bandwidth")
    pf = (card.tflops_fp16_dense or 10) * 1e12 * 0.4 / (2 * model.parameters_total)
    prefill = PrefillEstimate(pf, pf * 0.7, pf * 1.4, 512 / pf, "compute")
    fit = "comfortable" if memory_at(model, chosen, 2 * context).total_gib <= usable else "tight"
    return Estimate(model.name, card.name, chosen, context, be, mem, usable, True, fit, decode, prefill)


def estimate(model: Model, card: Card, *, quant: str | None = None, context: int = DEFAULT_CONTEXT,
             backend: str | None = None, min_quality: str | None = None) -> Estimate:
    """One model on one card."""
    _check(context, quant or min_quality)
    return _one(model, card, quant, context, backend, min_quality)


def estimate_on_cards(model: Model, cards: Sequence[Card], *, context: int = DEFAULT_CONTEXT,
                      min_quality: str | None = None, backend: str | None = None) -> list[Estimate]:
    """`model` on every card, in the order of `cards`."""
    _check(context, min_quality)
    return [_one(model, c, None, context, backend, min_quality) for c in cards]


def estimate_models_on_card(models: Sequence[Model], card: Card, *, context: int = DEFAULT_CONTEXT,
                            min_quality: str | None = None, backend: str | None = None) -> list[Estimate]:
    """Every model in `models` on `card`, in the order of `models`."""
    _check(context, min_quality)
    return [_one(m, card, None, context, backend, min_quality) for m in models]
