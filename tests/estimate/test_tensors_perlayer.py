"""Per-layer attention heads (OpenELM, DeciLM): q/k/v/o shapes and the KV cache, hand-worked."""
from __future__ import annotations

import pytest
from pydantic import ValidationError

from tpscalc.catalog.schema import Architecture
from tpscalc.estimate.memory import kv_cache_bytes
from tpscalc.estimate.tensors import layer_heads, parameter_counts, tensor_inventory

# Two layers, hidden 64, heads of 16: layer 0 has 2 query / 1 KV heads, layer 1 has 4 / 2.
TINY = {"num_layers": 2, "hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4,
            "num_kv_heads": 2, "head_dim": 16, "vocab_size": 100}
PER_LAYER = Architecture(**TINY, layer_num_heads=(2, 4), layer_num_kv_heads=(1, 2))


def _shape(arch: Architecture, name: str, layer: int) -> tuple[int, int]:
    t = next(t for t in tensor_inventory(arch) if t.name == name and t.layer == layer)
    return t.n_cols, t.n_rows


def test_attention_shapes_follow_the_layer() -> None:
    assert layer_heads(PER_LAYER, 0) == (2, 1)
    assert layer_heads(PER_LAYER, 1) == (4, 2)
    assert _shape(PER_LAYER, "attn_q", 0) == (64, 32)  # 2 heads x 16
    assert _shape(PER_LAYER, "attn_k", 0) == (64, 16)
    assert _shape(PER_LAYER, "attn_v", 0) == (64, 16)
    assert _shape(PER_LAYER, "attn_output", 0) == (32, 64)
    assert _shape(PER_LAYER, "attn_q", 1) == (64, 64)
    assert _shape(PER_LAYER, "attn_k", 1) == (64, 32)
    assert _shape(PER_LAYER, "attn_output", 1) == (64, 64)


def test_parameter_count_hand_worked() -> None:
    # embeddings 2 x 100 x 64; norms 2 per layer + output 64 each; FFN 3 x 64 x 128 per layer;
    # attention: layer 0 q 64x32 + k,v 64x16 + o 32x64 = 6144, layer 1 4096+2048+2048+4096 = 12288
    expected = 2 * 100 * 64 + 5 * 64 + 2 * 3 * 64 * 128 + 6144 + 12288
    # active leaves out the 100 x 64 token-embedding table (the output head counts)
    assert parameter_counts(PER_LAYER) == (expected, expected - 100 * 64)


def test_kv_cache_sums_the_layers() -> None:
    # per token: 2 (K and V) x (1 + 2) KV heads x 16 = 96 values, 2 bytes each at f16
    assert kv_cache_bytes(PER_LAYER, 100) == 96 * 100 * 2
    # q8_0: 34 bytes per block of 32 values
    assert kv_cache_bytes(PER_LAYER, 64, "q8_0") == round(96 * 64 * 34 / 32)


def test_uniform_lists_change_nothing() -> None:
    uniform = Architecture(**TINY, layer_num_heads=(4, 4), layer_num_kv_heads=(2, 2))
    plain = Architecture(**TINY)
    assert tensor_inventory(uniform) == tensor_inventory(plain)
    assert kv_cache_bytes(uniform, 1000) == kv_cache_bytes(plain, 1000)


def test_kv_cache_skips_layers_without_attention() -> None:
    # layer 1 is a Mamba-2 layer: only layer 0's single KV head is cached
    arch = Architecture(**TINY, layer_num_heads=(2, 0), layer_num_kv_heads=(1, 0),
                        layer_mixers="AM", ssm_inner_size=128, ssm_state_size=16,
                        ssm_num_heads=2)
    no_state = kv_cache_bytes(arch, 10) - kv_cache_bytes(arch, 0)
    assert no_state == 2 * 1 * 16 * 10 * 2


@pytest.mark.parametrize("bad", [
    {"layer_num_heads": (2,), "layer_num_kv_heads": (1, 2)},  # wrong length
    {"layer_num_heads": (2, 8), "layer_num_kv_heads": (1, 2)},  # above num_attention_heads
    {"layer_num_heads": (4, 4), "layer_num_kv_heads": (3, 2)},  # above num_kv_heads
    {"layer_num_heads": (2, 4), "layer_num_kv_heads": (2, 0)},  # query heads without KV heads
    {"num_attention_heads": 6, "num_kv_heads": 4, "layer_num_heads": (6, 6),
         "layer_num_kv_heads": (4, 2)},  # 4 does not divide 6
])
def test_inconsistent_heads_rejected(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        Architecture.model_validate(dict(TINY, **bad))
