"""Hand-map rows checked against the published totals they cite.

The rows: Aria, Swallow (70B), Tri-21B, TeleChat2-3B, XVERSE-MoE-A4.2B and XVERSE-65B-2.
Expected counts are worked by hand from each row's published shape and checked against the
published totals the rows cite (llmfit v1.1.17 safetensors counts, model cards)."""
from __future__ import annotations

from collections.abc import Callable

import pytest

from tpscalc.catalog.schema import Architecture

ArchOf = Callable[[str], Architecture]


def llama_count(layers: int, h: int, heads: int, kv: int, hd: int, ffn: int, vocab: int) -> int:
    """RMSNorm, bias-free q/k/v/o, SwiGLU (3 matrices), untied embedding and head, final norm."""
    attn = h * heads * hd * 2 + h * kv * hd * 2
    return layers * (attn + 3 * h * ffn + 2 * h) + 2 * vocab * h + h


def moe_count(layers: int, h: int, heads: int, hd: int, n_exp: int, n_shared: int,
              width: int, vocab: int, active: int | None = None) -> int:
    """Every layer MoE: MHA, router, routed + shared SwiGLU experts of one width, untied."""
    experts = n_exp if active is None else active
    layer = 4 * h * heads * hd + h * n_exp + (experts + n_shared) * 3 * h * width + 2 * h
    return layers * layer + 2 * vocab * h + h


def test_tri21b_matches_exact_safetensors_count(arch_of: ArchOf) -> None:
    """40 x 5120, 32/8 heads of 160, SwiGLU 27392, vocab 124416: llmfit's Tri-21B-Think
    count 20,725,519,360 to the parameter (the card's 20.73 B)."""
    expected = llama_count(40, 5120, 32, 8, 160, 27392, 124416)
    assert expected == 20_725_519_360
    assert arch_of("Tri-21B").params_total == expected


def test_tri21b_32_layer_reading_is_ruled_out() -> None:
    """The Tri-21B card's '32 layers' cannot give 20.73 B with the same widths."""
    assert llama_count(32, 5120, 32, 8, 160, 27392, 124416) < 17.0e9


def test_swallow_is_llama2_70b_with_expanded_vocab(arch_of: ArchOf) -> None:
    """Vocabulary 43176 follows from Swallow-7b-hf's 6,829,971,456 vs Llama 2-7B's count; the
    checkpoint also stores the rotary inv_freq buffers (32 layers x 64 values)."""
    inv_freq = 32 * 64
    assert llama_count(32, 4096, 32, 32, 128, 11008, 43176) + inv_freq == 6_829_971_456
    assert llama_count(32, 4096, 32, 32, 128, 11008, 32000) == 6_738_415_616
    arch = arch_of("Swallow")
    assert arch.vocab_size == 43176
    assert arch.params_total == llama_count(80, 8192, 64, 8, 128, 28672, 43176) == 69_159_755_776


def test_aria_decoder_plus_vision_is_published_total(arch_of: ArchOf) -> None:
    """28 MoE layers (64 x 1664 top-6 + 2 shared), 2560 wide, vocab 100352; the remainder of
    llmfit's 25,307,311,216 is the 438 M vision encoder and projector the paper describes."""
    arch = arch_of("Aria")
    assert arch.params_total == moe_count(28, 2560, 20, 128, 64, 2, 1664, 100352) == 24_869_091_840
    assert 25_307_311_216 - arch.params_total == pytest.approx(438e6, rel=0.01)
    embedding = 100352 * 2560  # active counts leave out the token-embedding table
    assert (arch.params_active
            == moe_count(28, 2560, 20, 128, 64, 2, 1664, 100352, active=6) - embedding)
    assert arch.params_active + embedding == pytest.approx(3.9e9, rel=0.07)  # card: 3.9 B (text)


def test_xverse_moe_total_and_active(arch_of: ArchOf) -> None:
    """Card: 25.8 B total, 4.2 B active (a survey table: 25.78 / 4.23)."""
    arch = arch_of("XVERSE-MoE-A4.2B")
    assert arch.params_total == moe_count(28, 2560, 32, 80, 64, 2, 1728, 100000)
    assert arch.params_total == pytest.approx(25.78e9, abs=0.01e9)
    # the card's 4.2 B counts the embedding table, which our active count leaves out
    assert arch.params_active + 100000 * 2560 == pytest.approx(4.23e9, abs=0.01e9)


def test_xverse_65b2_by_hand(arch_of: ArchOf) -> None:
    """80 x 8192, 64 heads (MHA), d_ff 22016, vocab 100534: 66.4 B for the '65B' model."""
    arch = arch_of("XVERSE-65B-2")
    assert arch.params_total == llama_count(80, 8192, 64, 64, 128, 22016, 100534)
    assert arch.params_total == pytest.approx(65e9, rel=0.03)


def test_telechat2_3b_by_hand(arch_of: ArchOf) -> None:
    """24 x 3072, 24 heads (MHA), ffn 6144, vocab 160256, untied: 3.25 B (Epoch 3.0 B)."""
    arch = arch_of("TeleChat2-3B")
    assert arch.params_total == llama_count(24, 3072, 24, 24, 128, 6144, 160256) == 3_249_687_552
    assert arch.num_kv_heads == arch.num_attention_heads


def test_pleias_350m_shares_the_rag_models_shape(arch_of: ArchOf) -> None:
    """Pleias 1.0 350m takes Pleias-RAG-350M's shape: llmfit's exact 353,424,384."""
    arch = arch_of("Pleias 1.0 350m")
    assert arch.params_total == arch_of("Pleias-RAG-350m").params_total == 353_424_384
    assert (arch.num_layers, arch.hidden_size, arch.vocab_size) == (26, 1024, 65536)
