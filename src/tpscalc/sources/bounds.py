"""Physical bounds on a model's shape: a value past them is a typo or a hostile file.

The bounds leave wide room above the largest published models (2025: hidden 16,384 and FFN
53,248 in Llama 3.1 405B, https://huggingface.co/meta-llama/Llama-3.1-405B/blob/main/config.json;
128 heads; a 262,144-token vocabulary in Gemma 3; 384 experts in Kimi K2; a 10M-token context
in Llama 4 Scout), so no real model meets them, while an impossible one is named and refused.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tpscalc.sources.types import SourceError

SHAPE_BOUNDS: dict[str, int] = {
    "num_layers": 1_000,
    "hidden_size": 2**17,
    "intermediate_size": 2**20,
    "moe_intermediate_size": 2**20,
    "num_attention_heads": 2**12,
    "num_kv_heads": 2**12,
    "head_dim": 2**12,
    "vocab_size": 2**22,
    "max_context": 2**27,
    "sliding_window": 2**27,
    "num_experts": 2**16,
    "num_experts_active": 2**16,
    "num_shared_experts": 2**16,
    "moe_latent_size": 2**17,
    "per_layer_input_size": 2**14,
    "kv_lora_rank": 2**16,
    "q_lora_rank": 2**16,
    "qk_rope_head_dim": 2**12,
    "qk_nope_head_dim": 2**12,
    "v_head_dim": 2**12,
}
MAX_TENSOR_DIM = 2**32
MAX_TENSOR_ELEMENTS = 2**40  # a trillion values in one tensor; real ones hold < 10^10


def check_shape(fields: Mapping[str, Any], name: str,
                labels: Mapping[str, str] | None = None) -> None:
    """SourceError naming the first field of `fields` past its bound, or heads that KV heads
    do not divide. labels: the file's own name of a field ("max_position_embeddings")."""

    def label(key: str) -> str:
        return (labels or {}).get(key, key)

    for key, bound in SHAPE_BOUNDS.items():
        value = fields.get(key)
        if value is None:
            continue
        if not isinstance(value, int) or isinstance(value, bool) or value > bound:
            raise SourceError(f"{name}: {label(key)} = {value!r} is impossible (a whole number "
                              f"of at most {bound:,})", "bad_shape")
    heads, kv = fields.get("num_attention_heads"), fields.get("num_kv_heads")
    per_layer = fields.get("layer_num_heads") or fields.get("layer_num_kv_heads")
    if isinstance(heads, int) and isinstance(kv, int) and not per_layer and heads % kv:
        raise SourceError(f"{name}: {label('num_kv_heads')} = {kv} does not divide "
                          f"{label('num_attention_heads')} = {heads} (each KV head serves a "
                          "whole group of query heads)", "bad_shape")
    active, experts = fields.get("num_experts_active"), fields.get("num_experts")
    if isinstance(active, int) and isinstance(experts, int) and active > experts:
        raise SourceError(f"{name}: {label('num_experts_active')} = {active} is more than "
                          f"{label('num_experts')} = {experts}", "bad_shape")
