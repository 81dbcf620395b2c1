"""Which of an architecture's layers attend, and with how many heads: read by the KV-cache
rules (memory.py) and the tensor inventories (tensor_blocks.py), here so that the first need not
load the second (a card report loads no tensor inventory).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from tpscalc.catalog.schema import Architecture


def is_linear_attention_layer(arch: Architecture, i: int) -> bool:
    """True when layer `i` is a linear-attention layer: every k-th layer keeps full attention."""
    if arch.layer_mixers:
        return arch.layer_mixers[i] not in "AP"
    n_lin = arch.linear_attention_layers
    if n_lin <= 0:
        return False
    n_full = arch.num_layers - n_lin
    if n_full <= 0:
        return True
    # Qwen3-Next / Qwen3.5: full_attention_interval = 4 → layers 3, 7, 11, ... are full.
    interval = max(1, round(arch.num_layers / n_full))
    return (i + 1) % interval != 0


def layer_heads(arch: Architecture, i: int) -> tuple[int, int]:
    """(query heads, KV heads) of layer `i`: the per-layer lists when given, else the scalars."""
    n_q = arch.layer_num_heads[i] if arch.layer_num_heads else arch.num_attention_heads
    n_kv = arch.layer_num_kv_heads[i] if arch.layer_num_kv_heads else arch.num_kv_heads
    return n_q, n_kv


@cache  # a few dozen distinct layer counts in the catalog
def _spread(n_layers: int, n_marked: int) -> frozenset[int]:
    """`n_marked` of `n_layers` positions, evenly spread, the last of each stretch marked:
    (k + 1) × n_layers ÷ n_marked − 1, rounded (30 layers, 5 marked: 5, 11, 17, 23, 29)."""
    return frozenset(round((k + 1) * n_layers / n_marked) - 1 for k in range(n_marked))


def full_attention_positions(arch: Architecture) -> frozenset[int]:
    """Layers with full (not sliding-window) attention. Without a per-layer list the
    sliding-window families place one full layer at the end of each stretch of sliding ones
    (Gemma 4 26B-A4B: 5 sliding then 1 full, config.json `layer_types`): the full layers
    are spread evenly over the attention layers, the last of each stretch, so their count is
    exact and their places are those of a regular pattern."""
    attending = [i for i in range(arch.num_layers) if not is_linear_attention_layer(arch, i)]
    n_swa = arch.sliding_window_layers if arch.sliding_window else 0
    n_full = len(attending) - n_swa
    if n_swa <= 0:
        return frozenset(attending)
    if n_full <= 0:
        return frozenset()
    return frozenset(attending[j] for j in _spread(len(attending), n_full))


@dataclass(frozen=True)
class AttentionGroup:
    """The attention layers of one kind (full or sliding-window) and their head shape."""

    layers: int  # layers of this kind that attend
    cached_layers: int  # of them, the layers that hold their own cache (not KV-shared)
    window: int | None  # tokens a layer sees at most; None = the whole context
    q_heads: int  # query heads per layer
    qk_dim: int  # size of a query and key head
    v_dim: int  # size of a value head
    kv_values: float  # values one layer caches per token (K and V rows, or MLA's latent)


def kv_values_per_token_layer(arch: Architecture) -> int:
    """Values one attention layer caches per token: K and V heads, or MLA's compressed latent.

    MLA (DeepSeek V2/V3, Kimi K2): llama.cpp caches the latent c_kv (kv_lora_rank) and the
    shared RoPE key (qk_rope_head_dim) as one K row and, since "kv-cache : support V-less cache"
    (https://github.com/ggml-org/llama.cpp/pull/19067, Jan 2026), no V rows. Builds between
    PR #12801 (Apr 2025) and that one also stored a V row of kv_lora_rank values.
    """
    if arch.is_mla:
        return (arch.kv_lora_rank or 512) + (arch.qk_rope_head_dim or 64)
    return 2 * arch.num_kv_heads * arch.head_dim


def _mean_kv_values(arch: Architecture) -> float:
    """Values cached per token, averaged over the attention layers (they differ with per-layer
    KV heads: OpenELM, DeciLM)."""
    if arch.layer_num_kv_heads is None or arch.is_mla:
        return kv_values_per_token_layer(arch)
    layers = [i for i in range(arch.num_layers) if not is_linear_attention_layer(arch, i)]
    if not layers:
        return 0.0
    return sum(2 * layer_heads(arch, i)[1] * arch.head_dim for i in layers) / len(layers)


def mla_head_dims(arch: Architecture) -> tuple[int, int]:
    """(query/key, value) head size multi-head latent attention attends with in llama.cpp.

    llama.cpp absorbs W_UK into the query and attends over the cached latent itself, for a
    prompt as for one token: every query head is kv_lora_rank + qk_rope_head_dim wide against
    one shared key of that width, and its value is the kv_lora_rank latent, decompressed by
    W_UV after attention (src/models/deepseek2.cpp: `q_nope_absorbed`, `Kcur = concat(kv_cmpr,
    k_pe)`, `Vcur = kv_cmpr`, `build_attn(..., wv_b, ...)`). GLM-4.7-Flash: 576 + 512 values
    per head and attended token, against the 256 + 256 of its decompressed heads.
    """
    rank = arch.kv_lora_rank or 512
    return rank + (arch.qk_rope_head_dim or 64), rank


def attention_groups(arch: Architecture) -> tuple[AttentionGroup, ...]:
    """The attention layers by kind: full-attention layers (with the global head shape where
    the architecture has one: Gemma 4's `global_head_dim`, `num_global_key_value_heads`),
    then sliding-window layers. KV-shared layers (the last `kv_shared_layers`) attend, but
    cache nothing: llama.cpp gives them no cache of their own (`n_layer_kv_from_start`,
    src/models/gemma4.cpp), they read the last earlier layer's of their kind. K = V on the
    global layers (`global_k_eq_v`) still caches both: llama.cpp stores V = the K projection,
    normalised without RoPE, in its own rows."""
    n_swa = arch.sliding_window_layers if arch.sliding_window else 0
    n_full = arch.num_layers - n_swa - arch.linear_attention_layers
    shared_full = shared_swa = 0
    if arch.kv_shared_layers:
        full_at = full_attention_positions(arch)
        for i in range(arch.num_layers - arch.kv_shared_layers, arch.num_layers):
            if i in full_at:
                shared_full += 1
            elif not is_linear_attention_layer(arch, i):
                shared_swa += 1
    values = _mean_kv_values(arch)
    heads, d = arch.num_attention_heads, arch.head_dim
    g_dim = arch.global_head_dim or d
    g_values = values
    if arch.global_head_dim or arch.global_num_kv_heads:
        g_values = 2 * (arch.global_num_kv_heads or arch.num_kv_heads) * g_dim
    g_dims, dims = ((g_dim, g_dim), (d, d)) if not arch.is_mla else (mla_head_dims(arch),) * 2
    out = []
    if n_full > 0:
        out.append(AttentionGroup(n_full, n_full - shared_full, None, heads, *g_dims, g_values))
    if n_swa > 0:
        out.append(AttentionGroup(n_swa, n_swa - shared_swa, arch.sliding_window, heads, *dims,
                                  values))
    return tuple(out)


# DeepSeek-V4's indexer keys are cached on its ratio-4 layers (the compressed sparse attention),
# not on the heavily compressed ratio-128 ones (DeepSeek-V4 report: CSA and HCA layers). Every
# layer keeps the 128-token window; a layer of ratio 4 builds a compressor and a C4 indexer, one
# of ratio 128 a compressor only, one of ratio 0 neither (sglang's MQALayer, configs in
# python/sglang/srt/configs/deepseek_v4.py: window_size 128, index_head_dim 128, v_head_dim 512).
INDEXED_RATIO = 4


def compressed_kv_values(arch: Architecture, context_tokens: int) -> int:
    """Values a compressed-attention cache holds for `context_tokens` beyond the sliding window
    (which kv_cache_bytes counts): per layer of ratio r > 0, ceil(context / r) entries of
    head_dim (one latent shared by K and V) plus, on the ratio-4 layers, the indexer's key of
    index_head_dim. 0 for an architecture without `compress_ratios`. Multiply by the cache
    type's bytes per value (memory.kv_bytes_per_element)."""
    if not arch.compress_ratios:
        return 0
    total = 0
    for r in arch.compress_ratios:
        if r <= 0:
            continue
        entries = -(-context_tokens // r)
        width = arch.head_dim * arch.num_kv_heads
        if r == INDEXED_RATIO and arch.index_head_dim:
            width += arch.index_head_dim
        total += entries * width
    return total
