"""Which of an architecture's layers attend, and with how many heads: read by the KV-cache
rules (memory.py) and the tensor inventories (tensor_blocks.py), here so that the first need not
load the second (a card report loads no tensor inventory).
"""
from __future__ import annotations

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
