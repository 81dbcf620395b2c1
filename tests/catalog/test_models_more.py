"""Families added from the hand map in the last coverage stretch (Kosmos-2 / 2.5 text
decoders, Aya = mT5-XXL, DeepSeek-OCR's MoE decoder, RWKV-4 World 7B): parameter counts
worked by hand from each row's published shape, and against published totals."""
from __future__ import annotations

from collections.abc import Callable

import pytest

from tpscalc.catalog.schema import Architecture

ArchOf = Callable[[str], Architecture]


def xglm_style_count(layers: int, h: int, ffn: int, vocab: int) -> int:
    """LayerNorm + biased q/k/v/o + biased 2-matrix GELU MLP per layer, tied head, final LN."""
    attn = 4 * h * h + 4 * h
    mlp = 2 * h * ffn + ffn + h
    norms = 2 * 2 * h
    return layers * (attn + mlp + norms) + vocab * h + 2 * h


def test_kosmos2_text_decoder_by_hand(arch_of: ArchOf) -> None:
    """Kosmos2TextConfig defaults: 24 layers, 2048, ffn 8192, vocab 65037 → 1,341,798,400."""
    expected = xglm_style_count(24, 2048, 8192, 65037)
    assert expected == 1_341_798_400
    assert arch_of("Kosmos-2").params_total == expected


def test_kosmos25_text_decoder_by_hand(arch_of: ArchOf) -> None:
    """Kosmos2_5TextConfig defaults: 24 layers, 1536, ffn 6144, vocab 108481; the rest of the
    1,374,646,272 safetensors count (llmfit v1.1.17) is the Pix2Struct-Large image encoder."""
    arch = arch_of("Kosmos-2.5")
    assert arch.params_total == xglm_style_count(24, 1536, 6144, 108481) == 846_586_368
    assert 0.4e9 < 1_374_646_272 - arch.params_total < 0.6e9


def test_aya_is_mt5_xxl(arch_of: ArchOf) -> None:
    """Epoch AI gives Aya (aya-101, a fine-tuned mT5-XXL) 13 B parameters."""
    arch = arch_of("Aya")
    assert arch.kind == "encoder-decoder" and arch.encoder_layers == 24
    assert arch.params_total == pytest.approx(13e9, rel=0.01)


def test_deepseek_ocr_decoder_by_hand(arch_of: ArchOf) -> None:
    """12 layers of 1280: layer 0 dense (6848), 11 MoE layers of 64 x 896 experts plus two
    shared, MHA 10 x 128, untied 129280 vocabulary; 6 of 64 routed experts active."""
    h, vocab = 1280, 129280
    attn, norms = 4 * h * h, 2 * h
    dense = attn + norms + 3 * h * 6848
    routed = 64 * 3 * h * 896
    moe = attn + norms + h * 64 + routed + 3 * h * 2 * 896
    expected = dense + 11 * moe + 2 * vocab * h + h
    arch = arch_of("Deepseek OCR")
    assert arch.params_total == expected == 2_934_734_080
    # active: routed experts at 6/64, the output head, not the token-embedding table
    assert arch.params_active == expected - round(11 * routed * (1 - 6 / 64)) - vocab * h
    # llmfit's 3,336,106,240 in all: the rest is CLIP-L (0.30 B), SAM-B (0.09 B), projector
    assert 0.35e9 < 3_336_106_240 - expected < 0.45e9


def test_rwkv4_world_7b_by_hand(arch_of: ArchOf) -> None:
    """RWKV-4 block: k, v, r, output (4 h^2) + channel mix key/value (2 x 4 h^2) and receptance
    (h^2) = 13 h^2 matrices, 11 h vectors (two LayerNorms, 3 time-mix lerps, decay, first,
    two channel-mix lerps); ln0 and ln_out; untied 65536 head."""
    h, vocab = 4096, 65536
    expected = 32 * (13 * h * h + 11 * h) + 2 * vocab * h + 4 * h
    arch = arch_of("RWKV-4 World (7B)")
    assert arch.rwkv_version == 4
    assert arch.params_total == expected == 7_517_650_944
