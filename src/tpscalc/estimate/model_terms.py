"""Everything the estimator needs of one model at one query that does not depend on the
device: the weights per format, KV and compute-buffer bytes, the encoder, the speed terms.

Made once per (model, formats, query) by engine._terms and shared by every device of every rig:
a one-card rig and a rig of several devices read the same terms (each device its share).
"""
from __future__ import annotations

from dataclasses import dataclass

from tpscalc.catalog.frozen import FrozenValue


@dataclass(slots=True, eq=False, repr=False)  # eq, hash, repr: FrozenValue
class ModelTerms(FrozenValue):
    """Everything about one model at one context that does not depend on the card, bytes.
    Not changed once made (a memo shares it); not frozen: a frozen dataclass's __init__ costs
    ~10 µs for 20 fields, and a card report makes ~1,000."""

    quants: tuple[str, ...]
    weights: tuple[float, ...]  # per quant (bytes)
    read_per_token: tuple[float, ...]  # per quant (bytes)
    kv: float
    kv_doubled: float
    compute: float
    compute_doubled: float
    approximated: bool
    n_layers: int
    flops_per_token: float
    is_moe: bool
    vision: float = 0.0  # image encoder bytes (0 with text_only)
    kv_decode: float = 0.0  # KV (and, without flash attention, score) bytes read per token
    attention_decode: float = 0.0  # attention FLOPs of one generated token at its depth
    attention_prefill: float = 0.0  # attention FLOPs of one prompt token (in flops_per_token)
    params_active: float = 0.0  # weights multiplied per token
    expert_params: float = 0.0  # routed-expert parameters per token
    expert_batch: float = float("inf")  # rows per expert GEMM in one micro-batch
    expert_gemms: float = 0.0  # expert GEMMs per prompt token
    expert_matrices: float = 0.0  # routed expert matrices multiplied per generated token
    decode_depth: float = 0.0  # tokens in the cache before the generated ones (test.depth)
    prefill_context: float = 0.0  # the mean context of a prompt token (prompt_mean_context)
    # attention heads that ROCm's WMMA flash-attention kernel takes
    # (speed_terms.wmma_attention_shape)
    wmma_attention: bool = False
