"""Hand-map rows counted from their published config.json shapes.

The rows: Pharia-1-LLM-7B, Reka Flash 3, DeciCoder-1B, Weblab-10B, Japanese-LM-3.6B (LINE),
CrystalCoder, SEA-LION V1 3B, Mi:dm 7B, Incoder-6.7B, Refact-1.6B and InternLM-XComposer (its
InternLM-7B decoder), PLaMo-13B, and base rows for CarrotAI (a Mistral-7B-shaped merge) and
NVILA 15B (Qwen2.5-14B). Expected counts are worked by hand from each row's published
config.json shape (cited in the map notes) with one closed formula."""
from __future__ import annotations

from collections.abc import Callable

import pytest

from tpscalc.catalog.schema import Architecture

ArchOf = Callable[[str], Architecture]


def dense_count(layers: int, h: int, heads: int, kv: int, hd: int, ffn: int, vocab: int, *,
                gated: bool = True, linear_bias: bool = False, norm_bias: bool = False,
                tied: bool = False) -> int:
    """Decoder parameters: q/k/v/o, 2- or 3-matrix MLP, optional biases, 2 norms per layer."""
    q, k = heads * hd, kv * hd
    attn = 2 * h * q + 2 * h * k + ((q + 2 * k + h) if linear_bias else 0)
    mlp = (3 if gated else 2) * h * ffn
    if linear_bias:
        mlp += (2 * ffn if gated else ffn) + h
    norm = 2 if norm_bias else 1
    return layers * (attn + mlp + 2 * h * norm) + vocab * h * (1 if tied else 2) + h * norm


def test_pharia_gelu_mlp_with_biases(arch_of: ArchOf) -> None:
    """27 x 4608, 36/4 heads of 128, GELU MLP 18432 with biases, vocab 128000: 7.04 B, the
    figure Epoch lists (7.04 B) to three digits."""
    expected = dense_count(27, 4608, 36, 4, 128, 18432, 128000, gated=False, linear_bias=True)
    assert expected == 7_041_291_264
    assert arch_of("Pharia-1-LLM-7B").params_total == expected
    assert abs(expected / 7.04e9 - 1) < 0.001


def test_pharia_gated_reading_would_fail_the_guard() -> None:
    """A SwiGLU reading of intermediate 18432 would be 9.3 B, outside Epoch's 7.04 B +15 %."""
    assert dense_count(27, 4608, 36, 4, 128, 18432, 128000, linear_bias=True) > 7.04e9 * 1.15


def test_reka_flash3_llama_shape(arch_of: ArchOf) -> None:
    """44 x 6144, 64/8 heads of 96, SwiGLU 19648, vocab 100352, untied: 20.9 B (card: 21 B)."""
    expected = dense_count(44, 6144, 64, 8, 96, 19648, 100352)
    assert expected == 20_905_482_240
    arch = arch_of("Reka Flash 3")
    assert arch.params_total == expected
    assert arch.max_context == 32768


def test_decicoder_1b(arch_of: ArchOf) -> None:
    """20 x 2048, 32/4 heads of 64, SwiGLU 5888, vocab 49152: 1.11 B (card: 1.1B)."""
    expected = dense_count(20, 2048, 32, 4, 64, 5888, 49152)
    assert expected == 1_113_671_680
    assert arch_of("DeciCoder-1B").params_total == expected


def test_weblab_10b_gpt_neox(arch_of: ArchOf) -> None:
    """36 x 4864, 38 heads of 128, GELU 19456, vocab 50277, LayerNorm and projection biases,
    untied: 10.7 B, 7 % over Epoch's 10 B."""
    expected = dense_count(36, 4864, 38, 38, 128, 19456, 50277,
                           gated=False, linear_bias=True, norm_bias=True)
    assert expected == 10_711_851_008
    assert arch_of("Weblab-10B").params_total == expected


def test_line_japanese_3_6b_tied_gpt_neox(arch_of: ArchOf) -> None:
    """30 x 3072, 32 heads of 96, GELU 12288, vocab 51200, tied: 3.56 B (name: 3.6B)."""
    expected = dense_count(30, 3072, 32, 32, 96, 12288, 51200,
                           gated=False, linear_bias=True, norm_bias=True, tied=True)
    assert expected == 3_555_876_864
    arch = arch_of("Japanese-LM-3.6B")
    assert arch.params_total == expected
    assert arch.tied_embeddings


def test_crystalcoder_swiglu_tied(arch_of: ArchOf) -> None:
    """32 x 4096, 32 heads of 128, SwiGLU 10922, vocab 32032, LayerNorm, tied: 6.57 B
    (Epoch 6.7 B; card: '7B', LLaMA-7B-like)."""
    expected = dense_count(32, 4096, 32, 32, 128, 10922, 32032, norm_bias=True, tied=True)
    assert expected == 6_573_924_352
    assert arch_of("CRYSTALCODER").params_total == expected


def test_sea_lion_3b_mpt_with_biases(arch_of: ArchOf) -> None:
    """32 x 2560, 20 heads of 128, GELU 4 x 2560, vocab 256000, tied, biases on: 3.17 B,
    matching model.safetensors' 6.36 GB at 2 bytes a parameter (within 1 %)."""
    expected = dense_count(32, 2560, 20, 20, 128, 10240, 256000,
                           gated=False, linear_bias=True, norm_bias=True, tied=True)
    assert expected == 3_173_012_480
    assert arch_of("SEA-LION V1 3B").params_total == expected
    assert abs(expected * 2 / 6.36e9 - 1) < 0.01


def test_midm_gated_reading(arch_of: ArchOf) -> None:
    """32 x 4096, 32 heads of 128, SwiGLU 10880, vocab 72192, LayerNorm, untied: 7.02 B; the
    2-matrix reading (5.6 B) would miss the 7B of the name by more than the 15 % guard."""
    expected = dense_count(32, 4096, 32, 32, 128, 10880, 72192, norm_bias=True)
    assert expected == 7_017_603_072
    assert arch_of("Mi:dm 7B").params_total == expected
    ungated = dense_count(32, 4096, 32, 32, 128, 10880, 72192, gated=False, norm_bias=True)
    assert ungated < 7.0e9 * 0.85


def test_carrotai_is_mistral_7b_shaped(arch_of: ArchOf) -> None:
    """Mistral-7B shape (32 x 4096, 32/8 heads, SwiGLU 14336, vocab 32000): 7,241,732,096,
    the 7.242 B the Open Ko-LLM leaderboard lists for OpenCarrot-Mix-7B."""
    expected = dense_count(32, 4096, 32, 8, 128, 14336, 32000)
    assert expected == 7_241_732_096
    assert arch_of("CarrotAI (CarrotAI大模型)").params_total == expected
    assert round(expected / 1e9, 3) == 7.242


def test_nvila_15b_uses_qwen25_14b(arch_of: ArchOf) -> None:
    """Qwen2.5-14B (48 x 5120, 40/8 heads, 13824, vocab 152064, q/k/v biases): 14.77 B."""
    h, q, kv = 5120, 40 * 128, 8 * 128
    qkv_bias = q + 2 * kv
    expected = dense_count(48, h, 40, 8, 128, 13824, 152064) + 48 * qkv_bias
    assert expected == 14_770_033_664
    assert arch_of("NVILA 15B").params_total == expected


def test_incoder_xglm_tied(arch_of: ArchOf) -> None:
    """32 x 4096, 32 heads, GELU 16384, vocab 50518, biases, tied, no position weights:
    6.65 B, within 1 % of Epoch's 6.7 B."""
    expected = dense_count(32, 4096, 32, 32, 128, 16384, 50518,
                           gated=False, linear_bias=True, norm_bias=True, tied=True)
    assert expected == 6_651_084_800
    assert arch_of("Incoder-6.7B").params_total == expected
    assert abs(expected / 6.7e9 - 1) < 0.01


def test_internlm_xcomposer_decoder(arch_of: ArchOf) -> None:
    """InternLM-7B decoder: 32 x 4096, 32 heads, SwiGLU 11008, vocab 103168, q/k/v biases:
    7.32 B, inside the multimodal window (50 % .. +15 %) of Epoch's 7.0 B."""
    expected = dense_count(32, 4096, 32, 32, 128, 11008, 103168) + 32 * 3 * 4096
    assert expected == 7_321_817_088
    assert arch_of("InternLM-XComposer").params_total == expected
    assert 0.5 * 7.0e9 <= expected <= 1.15 * 7.0e9


def test_refact_mqa_swiglu(arch_of: ArchOf) -> None:
    """32 x 2048, 32 query heads of 64 and one KV head, SwiGLU 5632 (llama.cpp's rule:
    256-multiple of 2/3 of 4 x 2048), vocab 49216, untied: 1.59 B (card: 1.6b)."""
    assert 256 * ((int(2 * 4 * 2048 / 3) + 255) // 256) == 5632
    expected = dense_count(32, 2048, 32, 1, 64, 5632, 49216)
    assert expected == 1_585_842_176
    assert arch_of("Refact-1.6B").params_total == expected


def test_plamo_13b_by_hand(arch_of: ArchOf) -> None:
    """PLaMo-13B: 40 layers of 5120, 40 query heads x 128 sharing 5 K/V heads (n_shared_head 8),
    SwiGLU 16640, untied 50432 vocabulary; two RMSNorms per layer as the estimator counts."""
    h, ffn, vocab, layers, kv_width = 5120, 16640, 50432, 40, 5 * 128
    attn = 2 * h * h + 2 * h * kv_width  # q, o full width; k, v 640 wide
    mlp = 3 * h * ffn
    per_layer = attn + mlp + 2 * h
    expected = layers * per_layer + 2 * vocab * h + h
    assert expected == 13_099_750_400
    arch = arch_of("PLaMo-13B")
    assert arch.num_kv_heads == 5 and not arch.tied_embeddings
    assert arch.params_total == expected
    # Epoch AI's figure for the model is 13.0 B; the published name says 13B.
    assert arch.params_total == pytest.approx(13.0e9, rel=0.02)
