"""Tensor inventories of encoders, encoder-decoders and RWKV: counts, quantization, state."""
from __future__ import annotations

import pytest

from tpscalc.catalog.schema import Architecture
from tpscalc.estimate.memory import (
    compute_buffer_bytes,
    encoder_output_bytes,
    kv_cache_bytes,
    recurrent_state_bytes,
)
from tpscalc.estimate.tensors import parameter_counts, tensor_inventory
from tpscalc.estimate.weights import tensor_ggml_type, weights_bytes

XLMR_LARGE = Architecture(
    kind="encoder", num_layers=24, hidden_size=1024, intermediate_size=4096,
    num_attention_heads=16, num_kv_heads=16, head_dim=64, vocab_size=250002, ffn_gated=False,
    norm_bias=True, linear_bias=True, norm_position="post", position_embeddings=514,
    token_type_embeddings=1)
MODERNBERT_BASE = Architecture(
    kind="encoder", num_layers=22, hidden_size=768, intermediate_size=1152,
    num_attention_heads=12, num_kv_heads=12, head_dim=64, vocab_size=50368, fused_qkv=True)


def _rwkv(version: int, layers: int, hidden: int, **kw: int) -> Architecture:
    return Architecture(
        num_layers=layers, hidden_size=hidden, intermediate_size=int(hidden * 3.5 // 32 * 32),
        num_attention_heads=1, num_kv_heads=1, head_dim=hidden, vocab_size=65536,
        layer_mixers="R" * layers, layer_ffns="C" * layers, rwkv_version=version,
        rwkv_head_size=64, **kw)


def _tiny_t5(**kw: object) -> Architecture:
    return Architecture(
        kind="encoder-decoder", num_layers=2, encoder_layers=3, hidden_size=8,
        intermediate_size=16, num_attention_heads=2, num_kv_heads=2, head_dim=4, vocab_size=10,
        relative_attention_buckets=32, **kw)  # type: ignore[arg-type]


def test_xlm_roberta_large_matches_the_published_safetensors_count() -> None:
    # intfloat/multilingual-e5-large-instruct: 559,890,432 (llmfit v1.1.17, from safetensors),
    # of which the pooler (1024 x 1024 + 1024) is not loaded by llama.cpp
    assert parameter_counts(XLMR_LARGE)[0] == 559_890_432 - (1024 * 1024 + 1024)


def test_modernbert_base_matches_the_published_count_exactly() -> None:
    # IAMJB/RadEvalModernBERT (ModernBERT-base shape): 149,014,272 (llmfit v1.1.17)
    assert parameter_counts(MODERNBERT_BASE)[0] == 149_014_272
    names = {t.name for t in tensor_inventory(MODERNBERT_BASE) if t.layer == 0}
    assert "attn_qkv" in names and "attn_norm" not in names  # layer 0: the embedding norm serves


def test_rwkv_counts_match_the_published_figures() -> None:
    finch_3b = _rwkv(6, 32, 2560, rwkv_time_mix_extra_dim=32, rwkv_time_decay_extra_dim=64)
    eagle_7b = _rwkv(5, 32, 4096)
    assert parameter_counts(finch_3b)[0] == pytest.approx(3.1e9, rel=0.005)  # RWKV-6 3B
    assert parameter_counts(eagle_7b)[0] == pytest.approx(7.52e9, rel=0.001)  # Eagle 7.52B


def test_tiny_t5_count_by_hand() -> None:
    h, f, v, heads, buckets = 8, 16, 10, 2, 32
    attn = 4 * h * h  # q, k, v, o (2 heads x 4 = 8 wide)
    ffn = 3 * h * f  # gated: gate, up, down
    enc_block = h + attn + h + ffn  # attn_norm, attention, ffn_norm, FFN
    dec_block = enc_block + h + attn  # plus cross_attn_norm and cross-attention
    expected = (v * h + 3 * enc_block + 2 * dec_block + 2 * heads * buckets  # rel. bias x 2
                + 2 * h + v * h)  # two output norms, untied output
    assert parameter_counts(_tiny_t5())[0] == expected


def test_t5_tensor_names_follow_llama_cpp() -> None:
    inv = tensor_inventory(_tiny_t5())
    dec = {t.name for t in inv if t.stack == "dec" and t.layer == 0}
    enc = {t.name for t in inv if t.stack == "enc"}
    assert {"attn_o", "cross_attn_q", "cross_attn_v", "cross_attn_o", "attn_rel_b"} <= dec
    assert not any(n.startswith("cross_") for n in enc)


def test_quantization_rules_reach_the_new_names() -> None:
    t5 = Architecture(kind="encoder-decoder", num_layers=24, encoder_layers=24,
                      hidden_size=2048, intermediate_size=5120, num_attention_heads=32,
                      num_kv_heads=32, head_dim=64, vocab_size=32128,
                      relative_attention_buckets=32)
    inv = tensor_inventory(t5)
    rel_b = next(t for t in inv if t.name == "attn_rel_b")
    assert tensor_ggml_type("Q4_K_M", rel_b, t5) == "F16"  # llama.cpp never quantizes it
    # cross_attn_v is an attn_v to llama.cpp: the first of the 72 attn_v-like tensors gets Q6_K
    first_cross_v = next(t for t in inv if t.name == "cross_attn_v")
    assert tensor_ggml_type("Q4_K_M", first_cross_v, t5) == "Q6_K"
    attn_o = next(t for t in inv if t.name == "attn_o")
    assert tensor_ggml_type("Q4_K_M", attn_o, t5) == "Q4_K"  # no attn_output rule for attn_o
    pos = next(t for t in tensor_inventory(XLMR_LARGE) if t.name == "position_embd")
    assert tensor_ggml_type("Q4_K_M", pos, XLMR_LARGE) == "F16"
    finch = _rwkv(6, 4, 512, rwkv_time_mix_extra_dim=32, rwkv_time_decay_extra_dim=64)
    w1 = next(t for t in tensor_inventory(finch) if t.name == "time_mix_w1")
    assert tensor_ggml_type("Q4_K_M", w1, finch) == "F16"
    assert weights_bytes(finch, "Q8_0") < weights_bytes(finch, "F16")


def test_encoders_hold_no_cache_and_output_embeddings() -> None:
    assert kv_cache_bytes(XLMR_LARGE, 512) == 0
    # the compute buffer's output rows are n_embd wide, not the 250k vocabulary
    decoder_like = XLMR_LARGE.model_copy(update={"kind": "decoder"})
    assert compute_buffer_bytes(XLMR_LARGE, 512) < compute_buffer_bytes(decoder_like, 512)


def test_encoder_decoder_caches_decoder_self_attention_only() -> None:
    t5 = _tiny_t5()
    # 2 decoder layers x (K + V) x 8 values x 2 bytes per token; the encoder caches nothing
    assert kv_cache_bytes(t5, 100) == 100 * 2 * 2 * 8 * 2
    assert encoder_output_bytes(t5, 100) == 100 * 8 * 4
    assert encoder_output_bytes(XLMR_LARGE, 100) == 0


def test_rwkv_state_is_fixed_and_as_llama_cpp_sizes_it() -> None:
    finch_3b = _rwkv(6, 32, 2560, rwkv_time_mix_extra_dim=32, rwkv_time_decay_extra_dim=64)
    per_layer = 2 * 2560 + 2560 * 64  # token shift (2 x n_embd) + wkv state (n_embd x 64)
    assert recurrent_state_bytes(finch_3b) == 32 * per_layer * 4  # f32
    assert kv_cache_bytes(finch_3b, 1024) == kv_cache_bytes(finch_3b, 65536)


def test_schema_rejects_inconsistent_kinds() -> None:
    with pytest.raises(ValueError):
        Architecture(num_layers=2, hidden_size=8, num_attention_heads=2, num_kv_heads=2,
                     head_dim=4, vocab_size=10, encoder_layers=2)
    with pytest.raises(ValueError):
        Architecture(num_layers=2, hidden_size=8, num_attention_heads=2, num_kv_heads=2,
                     head_dim=4, vocab_size=10, layer_mixers="RR")
