"""Tensor parallel across identical GPUs (vLLM's and SGLang's --tensor-parallel-size N).

Every GPU holds 1/N of each layer's weights and of the KV cache (the attention heads are split)
and its own activations, CUDA graphs and context:
    per GPU = (weights + KV + encoder) / N + buffers + overhead ≤ memory fraction × memory.
The N GPUs read their shares at once, so a token's work runs as on one card of N times the
bandwidth and compute (the per-card calibration of the same kernels), plus two all-reduces of
the activations per layer: latency-bound for a decode step, bandwidth-bound for a prompt.
With N = 1 it is the single card's answer (a test holds the two equal).
"""
from __future__ import annotations

import math

from tpscalc.catalog.schema import Card, Model
from tpscalc.estimate import memory as mem
from tpscalc.estimate import speed
from tpscalc.estimate.answer import at_level, low_confidence, prefill_at_level
from tpscalc.estimate.calibration_store import calibration
from tpscalc.estimate.model_terms import ModelTerms
from tpscalc.estimate.novelty import with_novelty
from tpscalc.estimate.query import EstimateInputError, Query, Rig
from tpscalc.estimate.runtime import Runtime
from tpscalc.estimate.runtimes import ALLREDUCE_US, LINK_GB_S, VLLM_BATCHED_TOKENS, link_kind
from tpscalc.estimate.types import (
    UNQUANTIZED,
    DecodeEstimate,
    Estimate,
    FitLabel,
    MemoryBreakdown,
    PrefillEstimate,
)

GIB = 2**30


def _group(card: Card, n: int) -> Card:
    """N cards as one of N times the memory, bandwidth, compute and power (a GPU's share of
    the work is 1/N; the per-card calibration applies to its kernels)."""
    scaled = {f: getattr(card, f) * n for f in ("memory_gib", "bandwidth_gb_s",
                                                "tflops_fp16_dense", "tflops_fp16_shader",
                                                "tflops_fp32", "tdp_w")
              if getattr(card, f) is not None}
    return card.model_copy(update=scaled)


def check_group(model: Model, rig: Rig, rt: Runtime) -> int:
    """N, when the rig's GPUs can run `model` in tensor parallel: identical cards, and the
    attention heads split evenly; else an EstimateInputError."""
    cards = rig.devices
    n = len(cards)
    if len({c.name for c in cards}) > 1:
        raise EstimateInputError(f"{rt.label} splits each layer across identical GPUs "
                                 f"(--tensor-parallel-size); {rig.name} mixes cards",
                                 "bad_rig")
    arch = model.architecture or mem.approx_architecture(model.parameters_total)
    if arch.num_attention_heads % n or arch.num_kv_heads % n and n % arch.num_kv_heads:
        raise EstimateInputError(f"{model.name} has {arch.num_attention_heads} attention "
                                 f"heads ({arch.num_kv_heads} KV heads): tensor parallel {n} "
                                 "does not split them evenly", "bad_tensor_parallel")
    return n


def _per_gpu(t: ModelTerms, j: int, n: int, fixed: float, doubled: bool = False) -> float:
    """Bytes on each GPU at format j."""
    kv = t.kv_doubled if doubled else t.kv
    compute = t.compute_doubled if doubled else t.compute
    return (float(t.weights[j]) + kv + t.vision) / n + compute + fixed


def estimate_tp(model: Model, t: ModelTerms, rig: Rig, query: Query, rt: Runtime) -> Estimate:
    """`model` on the rig's N identical GPUs in tensor parallel: the least compressed of the
    terms' formats that fits every GPU."""
    n = check_group(model, rig, rt)
    card = rig.devices[0]
    backend = query.backend or rt.default_backend(card)
    fixed = rt.overhead_bytes(backend)
    usable = rt.usable_gib(card) * GIB
    fits = [j for j in range(len(t.quants)) if _per_gpu(t, j, n, fixed) <= usable]
    test = query.test

    def memory(j: int) -> MemoryBreakdown:
        return mem.breakdown(float(t.weights[j]), t.kv, n * (t.compute + fixed), t.vision,
                             t.approximated)

    if not fits:
        j = len(t.quants) - 1
        short = n * (_per_gpu(t, j, n, fixed) - usable) / GIB
        return Estimate(model.name, rig.name, None, query.context, backend, memory(j),
                        n * usable / GIB, False, "no", None, None, round(short, 2), test,
                        runtime=rt.name, tensor_parallel=n)
    j = fits[0]
    label: FitLabel = ("comfortable" if _per_gpu(t, j, n, fixed, doubled=True) <= usable
                       else "tight")
    decode, prefill = _speeds(model, t, j, _group(card, n), n, query, rt)
    return Estimate(model.name, rig.name, t.quants[j], query.context, backend, memory(j),
                    n * usable / GIB, True, label, decode if model.generates else None,
                    prefill, None, test, runtime=rt.name, tensor_parallel=n)


def _speeds(model: Model, t: ModelTerms, j: int, group: Card, n: int, query: Query,
            rt: Runtime) -> tuple[DecodeEstimate, PrefillEstimate | None]:
    cal = calibration()
    test = query.test
    fmt = rt.speed_quant(t.quants[j])
    d = speed.decode_estimates(
        t.read_per_token[j], t.kv_decode, t.n_layers, [group], query.backend, cal,
        params_read=t.params_active, quant=fmt,
        attention_flops=t.attention_decode, depth_tokens=t.decode_depth,
        expert_matrices=t.expert_matrices * n,  # every GPU runs every expert's slice
        expert_params=t.expert_params)[0]
    p = speed.prefill_estimates(
        t.flops_per_token, test.n_prompt, [group], query.backend, cal,
        weights_bytes=t.weights[j], quantized=fmt not in UNQUANTIZED, bf16=fmt == "BF16",
        ubatch=test.n_ubatch,
        attention_flops_per_token=t.attention_prefill, expert_params=t.expert_params,
        expert_batch=t.expert_batch, expert_gemms=t.expert_gemms,
        flash_attn=test.flash_attn, wmma_attention=t.wmma_attention,
        context_tokens=t.prefill_context)[0]
    if n > 1:
        d, p = _with_all_reduce(d, p, model, t, group, n, test.n_prompt)
    if t.approximated:
        d = low_confidence(d, cal)
    d, p = with_novelty(d, p, cal, model, d.confidence, t.is_moe)
    return at_level(d, rt.level), prefill_at_level(p, rt.level)


def _with_all_reduce(d: DecodeEstimate, p: PrefillEstimate | None, model: Model,
                     t: ModelTerms, group: Card, n: int, prompt: int
                     ) -> tuple[DecodeEstimate, PrefillEstimate | None]:
    """The speeds with two all-reduces a layer: a decode step's at the link's latency, a
    prompt's also at its bandwidth (a ring moves 2 (N - 1) / N of the activations, bf16)."""
    link = link_kind(group)
    step = 2 * t.n_layers * ALLREDUCE_US[link] * 1e-6
    decode = DecodeEstimate(1 / (1 / d.tokens_per_s + step), 1 / (1 / d.low + step),
                            1 / (1 / d.high + step), d.confidence, d.bound)
    if p is None:
        return decode, None
    arch = model.architecture or mem.approx_architecture(model.parameters_total)
    moved = 2 * t.n_layers * prompt * arch.hidden_size * 2 * 2 * (n - 1) / n
    chunks = math.ceil(prompt / VLLM_BATCHED_TOKENS)
    extra = moved / (LINK_GB_S[link] * 1e9) + chunks * step
    seconds = prompt / p.tokens_per_s + extra
    prefill = PrefillEstimate(prompt / seconds, prompt / (prompt / p.low + extra),
                              prompt / (prompt / p.high + extra), seconds, p.bound)
    return decode, prefill
