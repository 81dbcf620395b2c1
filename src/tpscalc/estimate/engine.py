"""The engine facade: one model on many cards (or many models on one card) in one call.

Composes the pure terms (weights, memory, fit, speed) for the reports, CLI, API and site.
The only data it touches comes in through `catalog` loaders (the precomputed weight table and
the speed calibration), both cached: the formulas themselves stay pure.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tpscalc.catalog import store
from tpscalc.catalog.calibration_store import calibration
from tpscalc.catalog.quants import UnknownQuantizationError, get_quant, quantizations
from tpscalc.catalog.schema import Card, Model
from tpscalc.estimate import memory as mem
from tpscalc.estimate import speed
from tpscalc.estimate.calibration import Calibration, lookup_measured
from tpscalc.estimate.fit import choose_quants
from tpscalc.estimate.speed_terms import (
    attention_flops_per_token,
    attention_score_bytes,
    expert_batch,
    moe_expert_params_per_token,
)
from tpscalc.estimate.bench import speed_test
from tpscalc.estimate.types import (
    DecodeEstimate,
    Estimate,
    FitLabel,
    Measured,
    MemoryBreakdown,
    SpeedTest,
)
from tpscalc.estimate.weights import (
    approx_weights_bytes,
    weights_bytes,
    weights_read_per_token_bytes,
)

DEFAULT_CONTEXT = 4096
# Llama 4 Scout's 10M-token window is the longest any catalog model publishes; beyond it no
# model can hold the context, so it is rejected as input.
MAX_CONTEXT = 10_000_000
GIB = 2**30
UNQUANTIZED = frozenset({"F16", "BF16", "F32"})
# KV-cache types llama.cpp offers for -ctk/-ctv that the product exposes (f16 is its default).
KV_TYPES = ("f16", "q8_0", "q4_0")


_FIT_LABELS: dict[str, FitLabel] = {"comfortable": "comfortable", "tight": "tight", "no": "no"}


class EstimateInputError(ValueError):
    """Bad input to the engine: context out of range, unknown quantization."""


def check_context(context: int) -> int:
    """`context` if it is a whole number of tokens in 1..MAX_CONTEXT, else EstimateInputError."""
    if isinstance(context, bool) or not isinstance(context, int) or not 0 < context <= MAX_CONTEXT:
        raise EstimateInputError(
            f"context must be between 1 and {MAX_CONTEXT:,} tokens (a whole number), not {context!r}")
    return context


# llama.cpp GPU backends the speed model is calibrated for (sycl borrows vulkan's parameters).
BACKENDS = ("cuda", "rocm", "vulkan", "metal", "sycl")


def check_backend(backend: str | None) -> str | None:
    """`backend` lower-cased (None: each card's usual one), else EstimateInputError."""
    if backend is None or not backend.strip():
        return None
    value = backend.strip().lower()
    if value not in BACKENDS:
        raise EstimateInputError(f"unknown backend {backend!r}; use one of {', '.join(BACKENDS)}")
    return value


def check_kv_type(kv_type: str) -> str:
    """`kv_type` lower-cased if llama.cpp's KV cache can use it here, else EstimateInputError."""
    value = kv_type.strip().lower()
    if value not in KV_TYPES:
        raise EstimateInputError(f"unknown KV-cache type {kv_type!r}; use one of {', '.join(KV_TYPES)}")
    return value


def _quant_name(name: str) -> str:
    try:
        return get_quant(name).name
    except UnknownQuantizationError as exc:
        raise EstimateInputError(str(exc)) from exc


def _floor_index(min_quality: str | None) -> int | None:
    """Index on the ladder of the most compressed type allowed (None: any)."""
    if min_quality is None:
        return None
    name = _quant_name(min_quality)
    names = [q.name for q in quantizations()]
    if name not in names:
        raise EstimateInputError(f"{name} is not on the quality ladder; use one of {', '.join(names)}")
    return names.index(name)


@dataclass(frozen=True)
class _ModelTerms:
    """Everything about one model at one context that does not depend on the card, bytes."""

    quants: tuple[str, ...]
    weights: np.ndarray  # per quant
    read_per_token: np.ndarray  # per quant
    kv: float
    kv_doubled: float
    compute: float
    compute_doubled: float
    approximated: bool
    n_layers: int
    flops_per_token: float
    is_moe: bool
    kv_decode: float = 0.0  # KV (and, without flash attention, score) bytes read per token
    attention_decode: float = 0.0  # attention FLOPs of one generated token at its depth
    attention_prefill: float = 0.0  # attention FLOPs of one prompt token (part of flops_per_token)
    params_active: float = 0.0  # weights multiplied per token
    expert_params: float = 0.0  # routed-expert parameters per token
    expert_batch: float = float("inf")  # rows per expert GEMM in one micro-batch


def _weights(model: Model, quant: str) -> tuple[float, float]:
    """(weights bytes, weight bytes read per token) from the table, else from the formulas."""
    types, rows = store.weights_table()
    row = rows.get(model.slug)
    if row is not None and quant in types:
        w, r = row[types.index(quant)]
        return float(w), float(r)
    arch = model.architecture
    if arch is None:
        total = approx_weights_bytes(model.parameters_total, quant)
        return total, total * model.parameters_active / model.parameters_total
    return float(weights_bytes(arch, quant)), weights_read_per_token_bytes(arch, quant)


def _terms(model: Model, quants: Sequence[str], context: int, kv_type: str = "f16",
           test: SpeedTest | None = None) -> _ModelTerms:
    test = test or speed_test(context)
    arch = model.architecture or mem.approx_architecture(model.parameters_total)
    pairs = [_weights(model, q) for q in quants]
    # Decode: `n_gen` tokens after `depth`, each seeing on average depth + n_gen / 2 tokens.
    decode_ctx = test.depth + test.n_gen / 2
    kv_decode = float(mem.kv_cache_bytes(arch, max(1, round(decode_ctx)), kv_type))
    if not test.flash_attn:
        kv_decode += attention_score_bytes(arch, decode_ctx)
    prefill_ctx = speed.prompt_mean_context(test.n_prompt, test.depth)
    attention_prefill = attention_flops_per_token(arch, prefill_ctx)
    return _ModelTerms(
        quants=tuple(quants),
        weights=np.array([w for w, _ in pairs]), read_per_token=np.array([r for _, r in pairs]),
        kv=float(mem.kv_cache_bytes(arch, context, kv_type)),
        kv_doubled=float(mem.kv_cache_bytes(arch, 2 * context, kv_type)),
        compute=float(mem.compute_buffer_bytes(arch, context)),
        compute_doubled=float(mem.compute_buffer_bytes(arch, 2 * context)),
        approximated=model.architecture is None, n_layers=arch.num_layers,
        flops_per_token=2.0 * model.parameters_active + attention_prefill, is_moe=arch.is_moe,
        kv_decode=kv_decode, attention_decode=attention_flops_per_token(arch, decode_ctx),
        attention_prefill=attention_prefill, params_active=float(model.parameters_active),
        expert_params=moe_expert_params_per_token(arch),
        expert_batch=expert_batch(arch, test.n_prompt, test.n_ubatch),
    )


def _backend(card: Card, backend: str | None) -> str:
    return backend or speed.default_backend(card)


def _breakdown(t: _ModelTerms, q: int, overhead: float) -> MemoryBreakdown:
    weights, runtime = float(t.weights[q]), t.compute + float(overhead)
    total = weights + t.kv + runtime
    return MemoryBreakdown(weights / GIB, t.kv / GIB, runtime / GIB, total / GIB, t.approximated)


def _low_confidence(d: DecodeEstimate, cal: Calibration) -> DecodeEstimate:
    """`d` with the unseen-family (low-confidence) band: for models whose shape is guessed."""
    band = cal.decode_bands.get("low")
    if band is None or d.confidence == "low":
        return d
    return DecodeEstimate(d.tokens_per_s, d.tokens_per_s * band.low_ratio,
                          d.tokens_per_s * band.high_ratio, "low", d.bound)


def _evaluate(models: Sequence[Model], terms: Sequence[_ModelTerms], cards: Sequence[Card],
              context: int, backend: str | None, floor: int | None,
              test: SpeedTest | None = None) -> list[Estimate]:
    """One estimate per row: row i is models[i] (terms[i]) on cards[i]; all rows share one ladder."""
    backend = check_backend(backend)
    quants = terms[0].quants
    backends = [_backend(c, backend) for c in cards]
    overhead = np.array([mem.backend_overhead_bytes(b) for b in backends], float)
    usable = np.array([c.usable_memory_gib for c in cards])
    weights = np.array([t.weights for t in terms])  # (rows, quants)
    fixed = np.array([t.kv + t.compute for t in terms]) + overhead
    fixed_doubled = np.array([t.kv_doubled + t.compute_doubled for t in terms]) + overhead
    choice = choose_quants((weights + fixed[:, None]) / GIB, usable, floor,
                           (weights + fixed_doubled[:, None]) / GIB)
    rows = np.flatnonzero(choice.index >= 0)
    q = choice.index[rows]
    fit_cards = [cards[int(i)] for i in rows]
    fit_terms = [terms[int(i)] for i in rows]
    cal = calibration()
    test = test or speed_test(context)
    decode = speed.decode_estimates(
        np.array([t.read_per_token[j] for t, j in zip(fit_terms, q)]),
        np.array([t.kv_decode for t in fit_terms]), np.array([t.n_layers for t in fit_terms]),
        fit_cards, backend, cal, is_moe=np.array([t.is_moe for t in fit_terms], bool),
        params_read=np.array([t.params_active for t in fit_terms]),
        quant=[quants[j] for j in q],
        attention_flops=np.array([t.attention_decode for t in fit_terms]))
    prefill = speed.prefill_estimates(
        np.array([t.flops_per_token for t in fit_terms]), test.n_prompt, fit_cards, backend, cal,
        weights_bytes=weights[rows, q], quantized=np.array([quants[j] not in UNQUANTIZED for j in q]),
        ubatch=test.n_ubatch,
        attention_flops_per_token=np.array([t.attention_prefill for t in fit_terms]),
        expert_params=np.array([t.expert_params for t in fit_terms]),
        expert_batch=np.array([t.expert_batch for t in fit_terms]))
    found = {int(i): (int(j), d, p) for i, j, d, p in zip(rows, q, decode, prefill)}
    out = []
    for i, (model, t, card) in enumerate(zip(models, terms, cards)):
        if i not in found:
            shown = floor if floor is not None else len(quants) - 1
            out.append(Estimate(model.name, card.name, None, context, backends[i],
                                _breakdown(t, shown, overhead[i]), float(usable[i]), False, "no",
                                None, None, round(float(choice.short_by_gib[i]), 2), test))
            continue
        j, d, p = found[i]
        if t.approximated:  # bytes and layers are guesses, whatever the card's calibration
            d = _low_confidence(d, cal)
        measured = lookup_measured(cal, card.name, model.name, quants[j], backends[i])
        if measured is not None:
            d = DecodeEstimate(d.tokens_per_s, d.low, d.high, d.confidence, d.bound,
                               measured.tokens_per_s)
        out.append(Estimate(model.name, card.name, quants[j], context, backends[i],
                            _breakdown(t, j, overhead[i]), float(usable[i]), True,
                            _FIT_LABELS[str(choice.label[i])], d, p, None, test,
                            # held measurements are from an empty cache: not beside a deep test
                            None if test.depth else
                            _measured(cal, card.name, model.name, quants[j], backends[i])))
    return out


def _measured(cal: Calibration, card: str, model: str, quant: str, backend: str
              ) -> Measured | None:
    """The held decode and prompt measurements of this card, model and quant (empty cache)."""
    dec = lookup_measured(cal, card, model, quant, backend)
    pre = lookup_measured(cal, card, model, quant, backend, kind="prefill")
    if dec is None and pre is None:
        return None
    return Measured(dec.tokens_per_s if dec else None, pre.tokens_per_s if pre else None,
                    dec.test if dec else None, pre.test if pre else None,
                    (dec or pre).source if (dec or pre) else "")


def _ladder() -> tuple[str, ...]:
    return tuple(q.name for q in quantizations())


def estimate(model: Model, card: Card, *, quant: str | None = None, context: int = DEFAULT_CONTEXT,
             backend: str | None = None, min_quality: str | None = None,
             kv_type: str = "f16", test: SpeedTest | None = None) -> Estimate:
    """One model on one card: the given quantization, else the least compressed that fits.

    `test` (see `speed_test`): the llama-bench conditions the speeds are for; default, a
    conversation filling `context`.
    """
    check_context(context)
    kv = check_kv_type(kv_type)
    test = test or speed_test(context)
    if quant is not None:
        q = _quant_name(quant)
        return _evaluate([model], [_terms(model, [q], context, kv, test)], [card], context,
                         backend, None, test)[0]
    floor = _floor_index(min_quality)
    return _evaluate([model], [_terms(model, _ladder(), context, kv, test)], [card], context,
                     backend, floor, test)[0]


def estimate_on_cards(model: Model, cards: Sequence[Card], *, context: int = DEFAULT_CONTEXT,
                      min_quality: str | None = None, backend: str | None = None,
                      kv_type: str = "f16") -> list[Estimate]:
    """`model` on every card, in the order of `cards` (vectorised over cards)."""
    check_context(context)
    floor = _floor_index(min_quality)
    terms = _terms(model, _ladder(), context, check_kv_type(kv_type))
    return _evaluate([model] * len(cards), [terms] * len(cards), cards, context, backend, floor)


def estimate_models_on_card(models: Sequence[Model], card: Card, *, context: int = DEFAULT_CONTEXT,
                            min_quality: str | None = None, backend: str | None = None,
                            kv_type: str = "f16") -> list[Estimate]:
    """Every model in `models` on `card`, in the order of `models`."""
    check_context(context)
    floor = _floor_index(min_quality)
    ladder, kv = _ladder(), check_kv_type(kv_type)
    terms = [_terms(m, ladder, context, kv) for m in models]
    return _evaluate(models, terms, [card] * len(models), context, backend, floor)


def memory_at(model: Model, quant: str, context: int, backend: str = "cuda",
              kv_type: str = "f16") -> MemoryBreakdown:
    """Memory `model` needs at `quant` and `context` tokens on `backend`, GiB."""
    check_context(context)
    t = _terms(model, [_quant_name(quant)], context, check_kv_type(kv_type))
    return _breakdown(t, 0, float(mem.backend_overhead_bytes(backend)))
