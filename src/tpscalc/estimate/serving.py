"""Serving many users: one model on one card (or rig) with N sequences at once, and the most
users that each get a target speed. Composes the engine's single-request estimate (the N = 1
anchor), its model terms and the card's calibrated parameters with batched.py's step model.
"""
from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from tpscalc.catalog.frozen import FrozenValue
from tpscalc.catalog.schema import Card, Model
from tpscalc.estimate import engine, speed
from tpscalc.estimate.batched import (
    MAX_PARALLEL,
    BatchedDecode,
    DecodeParts,
    batched_decode,
    max_users,
    sequences_kv_bytes,
    time_to_first_token_s,
)
from tpscalc.estimate.calibration import Calibration
from tpscalc.estimate.calibration_store import calibration
from tpscalc.estimate.model_terms import ModelTerms
from tpscalc.estimate.query import EstimateInputError, Query, Rig, ladder_position
from tpscalc.estimate.sycl_kernels import kernel_read_factors
from tpscalc.estimate.types import UNQUANTIZED, Estimate

GIB = 2**30
DEFAULT_USERS_AT_TOK_S = 20.0  # a readable stream: faster than people read (issue 26)
# Runtimes that page the KV cache, with their block size in tokens (vLLM's default
# --block-size 16, https://docs.vllm.ai/en/latest/configuration/engine_args.html); a runtime
# seam that names them (issue 25) passes its own.
PAGED_KV_BLOCK_TOKENS = {"vllm": 16, "sglang": 1}


@dataclass(frozen=True, eq=False, repr=False)  # eq, hash, repr: FrozenValue
class ServingEstimate(FrozenValue):
    """`parallel` sequences of `context` tokens each on the estimate's card, GiB and tok/s."""

    estimate: Estimate  # the single-request estimate at the quantization that serves N
    parallel: int
    kv_cache_gib: float  # the KV cache of all N sequences
    total_gib: float  # weights + N sequences' KV + buffers (+ encoder)
    usable_gib: float
    fits: bool
    decode: BatchedDecode | None  # None when the model does not fit with N sequences
    time_to_first_token_s: float | None  # a prompt arriving while N − 1 others decode
    llama_server: str  # the command line that realises it
    users_at: float | None = None  # the per-user target asked (tok/s)
    users: int | None = None  # the most users that get it
    users_limit: str | None = None  # "speed" or "memory"
    users_decode: BatchedDecode | None = None  # the speeds at that many users
    users_quant: str | None = None  # the quantization that serves the most of them
    curve: tuple[BatchedDecode, ...] = ()  # 1, 2, 4 ... users (to N or the most that fit)


def decode_parts(card: Card, backend: str | None, cal: Calibration, t: ModelTerms, quant: str,
                 model: Model) -> DecodeParts:
    """The single-request decode time of `model` (terms `t`, one quant) on `card`, by term, s;
    the same formula and parameters as speed.decode_estimates, plus the matrix rate."""
    own = speed.card_terms(card, backend, cal)  # the card's own terms, kept for its reports
    p, shader, c_q = own.params, own.shader, own.dequant_work(quant)
    arch = model.architecture
    # SYCL's unreordered types on an Intel GPU (sycl_kernels), as speed.decode_estimates
    factor = (kernel_read_factors(arch, quant, backend)[0]
              if arch is not None and own.reorders else 1.0)
    weights_s = (speed.memory_seconds(t.read_per_token[0] * factor, card.bandwidth_gb_s,
                                      p.decode_efficiency)
                 + speed.moe_matrix_seconds(t.expert_matrices, own.matrix_mb, card.bandwidth_gb_s))
    kv_s = speed.memory_seconds(t.kv_decode, card.bandwidth_gb_s, p.decode_efficiency)
    quantized = quant not in UNQUANTIZED
    rate = speed.gemm_tflops(card, p, quantized)
    eps = speed.prefill_efficiency(p, quantized, True)
    gemm_s = (2.0 * t.params_active / (eps * rate * 1e12)
              if math.isfinite(rate) and rate > 0 else 0.0)
    n_exp = (arch.num_experts or 0) if arch is not None and arch.is_moe else 0
    k = (arch.num_experts_active or 0) if arch is not None and arch.is_moe else 0
    share = min(1.0, t.expert_params / t.params_active) if t.params_active > 0 else 0.0
    # the experts' matrix-matrix tiles (Vulkan, BF16) go with the weights' dequantization: per
    # step, for the experts the step touches
    tiles = speed.decode_expert_gemm_work(t.expert_params, quant, own)
    return DecodeParts(weights_s, kv_s, speed.overhead_seconds(t.n_layers, p.per_token_us,
                                                               p.per_layer_us),
                       speed.compute_seconds(c_q * t.params_active + tiles, shader),
                       speed.compute_seconds(cal.attention_decode_factor * t.attention_decode,
                                             shader),
                       gemm_s, share if n_exp else 0.0, n_exp, k)


def _usable_gib(e: Estimate, rig: Rig) -> float:
    """The GPU memory that holds the model and its caches: the card's, or the rig's GPUs'."""
    if e.placement is not None and len(rig.devices) > 1:
        return sum(d.usable_memory_gib for d in rig.devices)
    return e.usable_gib


def _memory(e: Estimate, t: ModelTerms, n: int, context: int, block_tokens: int
            ) -> tuple[float, float]:
    """(KV cache of n sequences, total), GiB: the single estimate's total with its one
    sequence's KV replaced by n's."""
    kv_n = sequences_kv_bytes(t.kv, n, context, block_tokens) / GIB
    return kv_n, e.memory.total_gib - e.memory.kv_cache_gib + kv_n


def _first_fitting(model: Model, rig: Rig, query: Query, n: int, quant: str | None,
                   block_tokens: int) -> tuple[Estimate, ModelTerms | None]:
    """The single estimate at the least compressed quantization whose N sequences fit (the
    given one when `quant` is set), with its terms; the last tried when none fits (no terms
    when not even one sequence fits)."""
    e = engine.estimate(model, rig, query, quant)
    if e.quant is None or e.decode is None:
        return e, None
    best: tuple[Estimate, ModelTerms] | None = None
    for cand, t in _candidates(model, rig, query, e, quant):
        best = (cand, t)
        if _memory(cand, t, n, query.context, block_tokens)[1] <= _usable_gib(cand, rig):
            return best
    return best if best is not None else (e, None)


def _candidates(model: Model, rig: Rig, query: Query, e: Estimate, quant: str | None
                ) -> Iterator[tuple[Estimate, ModelTerms]]:
    """The single estimates (with their terms) at `e`'s quantization and, unless one was
    asked, each more compressed one the query's floor allows, least compressed first."""
    assert e.quant is not None
    _, floor = query.ladder_bounds()
    formats = engine.runtime.formats(model)
    tried = [e.quant] if quant is not None or e.quant not in formats else \
        [q for q in formats[formats.index(e.quant):]
         if floor is None or q == e.quant or ladder_position(q) <= floor]
    for q in tried:
        cand = e if q == e.quant else engine.estimate(model, rig, query, q)
        if cand.quant is not None and cand.decode is not None:
            yield cand, engine.model_terms_at(model, cand.quant, query)


def _most_users(model: Model, rig: Rig, query: Query, e: Estimate, quant: str | None,
                target: float, block: int) -> tuple[int, str, BatchedDecode | None, str | None]:
    """(users, what limits them, their speeds, the quantization) at the quantization that
    serves the most users at `target` tok/s each (the least compressed of equals)."""
    cal = calibration()
    best: tuple[int, str, BatchedDecode | None, str | None] = (0, "speed", None, None)
    for cand, t in _candidates(model, rig, query, e, quant):
        assert cand.decode is not None and cand.quant is not None
        card = rig.devices[0]
        parts = decode_parts(card, query.backend, cal, t, cand.quant, model)
        per_seq = sequences_kv_bytes(t.kv, 1, query.context, block) / GIB
        room = _usable_gib(cand, rig) - (cand.memory.total_gib - cand.memory.kv_cache_gib)
        fit_n = int(room // per_seq) if per_seq > 0 else MAX_PARALLEL
        users, limit = max_users(cand.decode, parts, target, fit_n)
        if users > best[0]:
            best = (users, limit, batched_decode(cand.decode, parts, users), cand.quant)
        if limit == "speed" or users >= MAX_PARALLEL:  # more compression: slower, no more users
            break
    return best


def serving_estimate(model: Model, rig: Rig, query: Query, parallel: int = 1,
                     quant: str | None = None, users_at: float | None = None,
                     runtime_name: str = "llama.cpp") -> ServingEstimate:
    """`parallel` users of `model` on `rig`, each holding `query.context` tokens; with
    `users_at`, also the most users that each get that many tok/s."""
    if not 1 <= parallel <= MAX_PARALLEL:
        raise EstimateInputError(f"parallel must be 1 to {MAX_PARALLEL}, not {parallel}",
                                 "bad_parallel")
    block = PAGED_KV_BLOCK_TOKENS.get(runtime_name, 0)
    e, t = _first_fitting(model, rig, query, parallel, quant, block)
    usable = _usable_gib(e, rig)
    command = (f"llama-server -m {'-'.join(model.name.split())}-{e.quant or 'Q4_K_M'}.gguf "
               f"-c {parallel * query.context} -np {parallel} -ngl 99")
    card = rig.devices[0] if rig.devices else None
    if t is None or e.decode is None or e.quant is None or card is None:
        # nothing fits, or CPU only (the batched model is for GPU kernels)
        kv = e.memory.kv_cache_gib * parallel
        return ServingEstimate(e, parallel, kv, e.memory.total_gib - e.memory.kv_cache_gib + kv,
                               usable, False, None, None, command, users_at,
                               0 if users_at is not None else None)
    kv_gib, total = _memory(e, t, parallel, query.context, block)
    cal = calibration()
    parts = decode_parts(card, query.backend, cal, t, e.quant, model)
    fits = total <= usable
    decode = batched_decode(e.decode, parts, parallel) if fits else None
    scale = (1.0 / e.decode.tokens_per_s) / parts.single_s
    ttft = None
    if fits and e.prefill is not None:
        test = query.test
        ttft = time_to_first_token_s(e.prefill.time_to_first_token_s, test.n_prompt,
                                     test.n_ubatch, parts, scale, parallel)
    users = limit = users_decode = users_quant = None
    if users_at is not None:
        users, limit, users_decode, users_quant = _most_users(model, rig, query, e, quant,
                                                              users_at, block)
    top = max(parallel, users or 1)
    counts = [n for n in (2 ** i for i in range(11)) if n < top] + [top]
    curve = tuple(batched_decode(e.decode, parts, n) for n in counts
                  if _memory(e, t, n, query.context, block)[1] <= usable)
    return ServingEstimate(e, parallel, kv_gib, total, usable, fits, decode, ttft, command,
                           users_at, users, limit, users_decode, users_quant, curve)


@dataclass(frozen=True, eq=False, repr=False)  # eq, hash, repr: FrozenValue
class SpeculativeEstimate(FrozenValue):
    """Speculative decoding of the estimate's model: a draft model or its MTP layers."""

    method: str  # "mtp" or "draft"
    draft: str | None  # the draft model's name
    draft_quant: str | None
    draft_tokens: int  # d, tokens drafted per step
    extra_memory_gib: float  # the draft's weights, KV cache and buffers
    fits: bool
    speedup: tuple[float, float, float]  # (low, typical, high) × the decode speed
    decode_tokens_per_s: float  # the typical speed-up × the single estimate's decode
    acceptance: tuple[float, float, float]
    sources: tuple[str, ...]
    llama_server: str  # the flags that turn it on


def speculative_estimate(model: Model, rig: Rig, query: Query, e: Estimate,
                         draft: Model | None) -> SpeculativeEstimate:
    """Speculative decoding of `model` (single estimate `e`) with `draft`, or with its own MTP
    layers when `draft` is None; raises EstimateInputError when it cannot be done."""
    from tpscalc.estimate.speculative import (
        ACCEPTANCE,
        VOCAB_MAX_SIZE_DIFFERENCE,
        has_mtp,
        mtp_draft_ratio,
        speedup_range,
    )

    if e.quant is None or e.decode is None or not rig.devices:
        raise EstimateInputError(f"{model.name} does not fit {e.gpu}: nothing to speed up",
                                 "bad_draft")
    cal = calibration()
    t = engine.model_terms_at(model, e.quant, query)
    card = rig.devices[0]
    parts = decode_parts(card, query.backend, cal, t, e.quant, model)
    arch = model.architecture
    if draft is None:
        if not has_mtp(model.hf_repo, model.name):
            raise EstimateInputError(f"{model.name}'s release has no MTP layers; give a draft "
                                     "model (--draft NAME)", "no_mtp")
        acc = ACCEPTANCE["mtp"]
        bytes_per_weight = t.weights[0] / max(model.parameters_total, 1.0)
        head = (arch.vocab_size * arch.hidden_size * bytes_per_weight) if arch else 0.0
        ratio = mtp_draft_ratio(t.n_layers, head, t.read_per_token[0])
        # one more decoder layer (its weights and KV) and a compute buffer of its own
        extra = (t.weights[0] / t.n_layers + t.kv / max(t.n_layers, 1) + t.compute) / GIB
        flags = f"--spec-type draft-mtp --spec-draft-n-max {acc.draft_tokens}"
        name = quant_d = None
    else:
        va = arch.vocab_size if arch else None
        vb = draft.architecture.vocab_size if draft.architecture else None
        if va is None or vb is None or abs(va - vb) > VOCAB_MAX_SIZE_DIFFERENCE:
            raise EstimateInputError(
                f"{draft.name} cannot draft for {model.name}: its vocabulary ({vb or '?'} tokens) "
                f"is not the model's ({va or '?'}); llama.cpp needs the same tokenizer family",
                "bad_draft")
        acc = ACCEPTANCE["draft"]
        d = engine.estimate(draft, Rig.of(card), query, e.quant, placed=False)
        if d.decode is None or d.quant is None:
            d = engine.estimate(draft, Rig.of(card), query, placed=False)
        if d.decode is None or d.quant is None:
            raise EstimateInputError(f"{draft.name} does not fit {card.name} as a draft",
                                     "bad_draft")
        ratio = e.decode.tokens_per_s / d.decode.tokens_per_s
        overhead = engine.runtime.overhead_bytes(d.backend) / GIB
        extra = d.memory.total_gib - overhead
        name, quant_d = draft.name, d.quant
        flags = (f"-md {'-'.join(draft.name.split())}-{d.quant}.gguf -ngld 99 "
                 f"--draft-max {acc.draft_tokens} --draft-min 1")
    low, typical, high = speedup_range(parts, ratio, acc)
    fits = e.memory.total_gib + extra <= _usable_gib(e, rig)
    return SpeculativeEstimate("mtp" if draft is None else "draft", name, quant_d,
                               acc.draft_tokens, extra, fits, (low, typical, high),
                               e.decode.tokens_per_s * typical,
                               (acc.low, acc.typical, acc.high), acc.sources, flags)


def users_at_estimate(model: Model, card: Card, query: Query, e: Estimate,
                      target: float = DEFAULT_USERS_AT_TOK_S) -> tuple[int, str]:
    """The most users of single-card estimate `e` (its quantization, each with the query's
    context) that each get `target` tok/s, and what limits them; (0, "memory") when `e` does
    not fit. A report row's column: no re-estimate, the row's own quantization."""
    if e.quant is None or e.decode is None or not e.fits:
        return 0, "memory"
    t = engine.model_terms_at(model, e.quant, query)
    parts = decode_parts(card, query.backend, calibration(), t, e.quant, model)
    per_seq = t.kv / GIB
    room = e.usable_gib - (e.memory.total_gib - e.memory.kv_cache_gib)
    fit_n = int(room // per_seq) if per_seq > 0 else MAX_PARALLEL
    return max_users(e.decode, parts, target, fit_n)


def serving_curve(model: Model, rig: Rig, query: Query, counts: tuple[int, ...],
                  quant: str | None = None) -> list[tuple[int, BatchedDecode]]:
    """(N, batched decode) for each N of `counts` whose N sequences fit, at one quantization
    (the single answer's, or `quant`): the points of the serving chart."""
    e = engine.estimate(model, rig, query, quant, placed=False)
    if e.quant is None or e.decode is None or not rig.devices:
        return []
    t = engine.model_terms_at(model, e.quant, query)
    parts = decode_parts(rig.devices[0], query.backend, calibration(), t, e.quant, model)
    usable = _usable_gib(e, rig)
    return [(n, batched_decode(e.decode, parts, n)) for n in counts
            if _memory(e, t, n, query.context, 0)[1] <= usable]
