"""Many sequences decoded together (llama-server `-np N`, continuous batching): the time of one
batched step, its tokens per second in aggregate and per user, the KV cache of N sequences and
the time to a first token under that load. Pure: the terms come in, seconds and bytes go out.

One step generates one token for each of N sequences. Its time, with the single-request terms
of speed.py split into their parts (`DecodeParts`):
    t(N) = overhead + max(weights × touched(N) + dequant × touched(N), N × GEMM per token)
           + N × (KV read + attention)
- the weights are read once per step, whatever N (a MoE's experts: the share of the routed
  experts N tokens touch, `expert_read_factor`);
- each sequence reads its own KV cache and runs its own attention;
- the matrix work, 2 × active parameters per token, at the card's calibrated prompt rate (the
  ε × R of speed.prefill_estimates) grows with N and becomes the limit: the step is
  memory-bound while N × GEMM stays under the weights' read time, compute-bound after.
The figures are anchored on the single-request estimate: t_step(N) = t_1 × t(N) / t(1), so
N = 1 is today's answer exactly, its calibration, measured value and range included.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from tpscalc.catalog.frozen import FrozenValue
from tpscalc.estimate.types import Bound, DecodeEstimate

MAX_PARALLEL = 1024  # sequences; more than any runtime's default batch (vLLM max_num_seqs 256)


@dataclass(frozen=True, eq=False, repr=False)  # eq, hash, repr: FrozenValue
class DecodeParts(FrozenValue):
    """The single-request decode time split into its terms, s per token (speed.py's formula),
    and what a batched step needs beyond them."""

    weights_s: float  # reading the weights (× the MoE factor) at η × bandwidth
    kv_s: float  # reading one sequence's KV cache at its depth
    overhead_s: float  # launches and synchronisation per step
    dequant_s: float  # dequantization work of the weights read, at the shader rate
    attention_s: float  # one sequence's attention FLOPs, at the shader rate
    gemm_s: float  # 2 × active parameters of one token at the calibrated matrix rate (0: unknown)
    expert_share: float = 0.0  # share of the bytes read per token that are routed experts
    n_experts: int = 0  # routed experts per MoE layer (0: dense)
    n_experts_active: int = 0  # experts each token uses

    @property
    def single_s(self) -> float:
        """The modelled time of one token alone, s (equal to speed.decode_estimates' 1 / tok/s)."""
        return step_seconds(self, 1)


@dataclass(frozen=True, eq=False, repr=False)  # eq, hash, repr: FrozenValue
class BatchedDecode(FrozenValue):
    """Decode of N sequences at once, tokens/s; the range is the single estimate's band."""

    parallel: int
    aggregate_tokens_per_s: float
    per_user_tokens_per_s: float
    per_user_low: float
    per_user_high: float
    step_s: float  # one batched step (one token for each sequence), s
    bound: Bound  # which term decides the step at N


def distinct_experts(n_experts: int, n_active: int, tokens: int) -> float:
    """Expected distinct experts `tokens` tokens route to in one MoE layer, each picking
    `n_active` of `n_experts` uniformly: E × (1 − (1 − k/E)^N), count."""
    if n_experts <= 0 or n_active <= 0:
        return 0.0
    return n_experts * (1.0 - (1.0 - min(n_active, n_experts) / n_experts) ** tokens)


def expert_read_factor(parts: DecodeParts, n: int) -> float:
    """Bytes of weights a step of `n` tokens reads ÷ those one token reads (1 for dense)."""
    if parts.n_experts <= 0 or parts.n_experts_active <= 0 or parts.expert_share <= 0:
        return 1.0
    touched = distinct_experts(parts.n_experts, parts.n_experts_active, n)
    return (1.0 - parts.expert_share) + parts.expert_share * touched / parts.n_experts_active


def _terms(parts: DecodeParts, n: int) -> tuple[float, float, float]:
    """(weights-side time, GEMM time, per-sequence time) of a step of `n` tokens, s."""
    factor = expert_read_factor(parts, n)
    return ((parts.weights_s + parts.dequant_s) * factor, n * parts.gemm_s,
            n * (parts.kv_s + parts.attention_s))


def step_seconds(parts: DecodeParts, n: int) -> float:
    """Modelled time of one batched step of `n` sequences (one token each), s."""
    weights, gemm, per_seq = _terms(parts, n)
    return parts.overhead_s + max(weights, gemm) + per_seq


def step_bound(parts: DecodeParts, n: int) -> Bound:
    """The term that decides a step of `n`: the matrix rate, the memory reads or the overhead."""
    weights, gemm, per_seq = _terms(parts, n)
    if parts.overhead_s > max(weights, gemm) + per_seq:
        return "overhead"
    return "compute" if gemm > weights else "bandwidth"


def batched_decode(single: DecodeEstimate, parts: DecodeParts, n: int) -> BatchedDecode:
    """`n` sequences decoded together, anchored on the single-request estimate `single`."""
    if not 1 <= n <= MAX_PARALLEL:
        raise ValueError(f"parallel must be 1 to {MAX_PARALLEL}, not {n}")
    ratio = step_seconds(parts, n) / parts.single_s
    per_user = single.tokens_per_s / ratio
    low, high = single.low / ratio, single.high / ratio
    return BatchedDecode(n, n * per_user, per_user, low, high, 1.0 / per_user,
                         single.bound if n == 1 else step_bound(parts, n))


def max_users(single: DecodeEstimate, parts: DecodeParts, target_tokens_per_s: float,
              memory_fits: int) -> tuple[int, str]:
    """The most sequences that each get `target_tokens_per_s` or more, and what stops more:
    "speed" (one more would be slower than the target), "memory" (`memory_fits`, the most
    whose KV cache fits, is reached) or "none" (0: one alone is slower than the target)."""
    if memory_fits < 1 or single.tokens_per_s < target_tokens_per_s:
        return 0, "memory" if memory_fits < 1 else "speed"
    top = min(memory_fits, MAX_PARALLEL)
    lo, hi = 1, top  # per-user speed falls with N: the last N at or above the target
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if batched_decode(single, parts, mid).per_user_tokens_per_s >= target_tokens_per_s:
            lo = mid
        else:
            hi = mid - 1
    return lo, "memory" if lo == top else "speed"


def sequences_kv_bytes(kv_one_bytes: float, n: int, context_tokens: int,
                       block_tokens: int = 0) -> float:
    """KV cache of `n` sequences of `context_tokens` each, bytes, from one sequence's.

    llama.cpp (`block_tokens` 0): llama-server `-np N -c N×C` holds N × C cells, shared by the
    slots with --kv-unified (n_ctx_seq = n_ctx) or split C per slot without it
    (n_ctx_seq = n_ctx / n_seq_max; src/llama-context.cpp); the bytes are the same either way,
    and a sliding-window or recurrent layer keeps its window or state per sequence, so N × one
    sequence's cache. The hook for a paged runtime (vLLM, SGLang: `block_tokens` 16, vLLM's
    default block size) rounds each sequence up to whole blocks.
    """
    if block_tokens > 0 and context_tokens > 0:
        blocks = math.ceil(context_tokens / block_tokens)
        return n * kv_one_bytes * blocks * block_tokens / context_tokens
    return n * kv_one_bytes


def time_to_first_token_s(single_ttft_s: float, n_prompt: int, n_ubatch: int,
                          parts: DecodeParts, scale: float, n: int) -> float:
    """Time to the first token of a prompt that arrives while `n` − 1 sequences decode, s.

    llama-server puts the other slots' next tokens into every batch of the prompt (continuous
    batching): each of its ⌈prompt / ubatch⌉ micro-batches carries n − 1 more tokens (their
    matrix work and KV reads), and the prompt waits on average half a step of the n − 1 for the
    batch in flight. `scale`: single estimate's time per token ÷ the modelled one (the anchor).
    """
    if n <= 1:
        return single_ttft_s
    others = n - 1
    passes = math.ceil(max(n_prompt, 1) / max(n_ubatch, 1))
    extra = passes * others * (parts.gemm_s + parts.kv_s + parts.attention_s)
    wait = 0.5 * step_seconds(parts, others)
    return single_ttft_s + scale * (extra + wait)
