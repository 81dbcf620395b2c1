"""Hand-map rows checked against their checkpoint files.

The rows: PULI GPTrio, Ling-Plus and Trillion-7B. Expected counts are worked by hand from
each row's published shape and checked against the published totals the rows cite (llmfit
v1.1.17 safetensors counts, model cards, GGUF metadata)."""
from __future__ import annotations

from collections.abc import Callable

from tpscalc.catalog.schema import Architecture

ArchOf = Callable[[str], Architecture]


def neox_count(layers: int, h: int, ffn: int, vocab: int) -> int:
    """GPT-NeoX: LayerNorms with bias, biased fused QKV/dense/MLP (2 matrices), untied head."""
    attn = 3 * h * h + 3 * h + h * h + h
    mlp = h * ffn + ffn + ffn * h + h
    return layers * (attn + mlp + 4 * h) + 2 * vocab * h + 2 * h


def llama_count(layers: int, h: int, heads: int, kv: int, hd: int, ffn: int, vocab: int) -> int:
    """RMSNorm, bias-free q/k/v/o, SwiGLU (3 matrices), untied embedding and head, final norm."""
    attn = h * heads * hd * 2 + h * kv * hd * 2
    return layers * (attn + 3 * h * ffn + 2 * h) + 2 * vocab * h + h


def bailing_count(heads: int, kv: int, active_only: bool = False) -> int:
    """Ling-Plus: 88 MoE layers of hidden 5376, head_dim 128, 64 experts x 3072 (top-4) plus one
    shared expert, router without bias, untied vocab 126464."""
    h, hd, width, n_exp = 5376, 128, 3072, 64
    experts = 4 if active_only else n_exp
    attn = h * heads * hd * 2 + h * kv * hd * 2
    layer = attn + h * n_exp + (experts + 1) * 3 * h * width + 2 * h
    return 88 * layer + 2 * 126464 * h + h


def test_puli_gptrio_matches_exact_safetensors_count(arch_of: ArchOf) -> None:
    """32 x 4096, FFN 16384, vocab 150016: llmfit's 7,673,094,144 to the parameter."""
    expected = neox_count(32, 4096, 16384, 150016)
    assert expected == 7_673_094_144
    arch = arch_of("PULI GPTrio")
    assert arch.params_total == expected
    assert not arch.ffn_gated and arch.linear_bias


def test_ling_plus_matches_published_total_and_active() -> None:
    """42/6 heads give 290.6 B total / 29.0 B active against the README's 290 B / 28.8 B;
    the other config copy's 56/8 heads land further from both."""
    total, active = bailing_count(42, 6), bailing_count(42, 6, active_only=True)
    assert abs(total / 290e9 - 1) < 0.005
    assert abs(active / 28.8e9 - 1) < 0.01
    assert abs(bailing_count(56, 8, active_only=True) / 28.8e9 - 1) > 0.07


def test_ling_plus_catalog_record(arch_of: ArchOf) -> None:
    """The catalog's counts equal the hand-worked ones (shared expert counted as active)."""
    arch = arch_of('Ling-Plus ("Bailing")')
    assert arch.params_total == bailing_count(42, 6) == 290_602_910_976
    # active leaves out the token-embedding table (the output head counts)
    assert (arch.params_active
            == bailing_count(42, 6, active_only=True) - arch.vocab_size * arch.hidden_size)
    assert (arch.num_experts, arch.num_experts_active, arch.num_shared_experts) == (64, 4, 1)


def test_trillion_7b_matches_gguf_parameter_count(arch_of: ArchOf) -> None:
    """Tri-7B's shape with the preview's vocab 128128 rounds to the GGUF's 7.53 B; Tri-7B's own
    vocab 128256 gives llmfit's exact 7,526,944,768 (checks the shape, not only the round)."""
    assert llama_count(32, 4096, 32, 32, 128, 11008, 128256) == 7_526_944_768
    expected = llama_count(32, 4096, 32, 32, 128, 11008, 128128)
    assert round(expected / 1e9, 2) == 7.53
    assert arch_of("Trillion-7B").params_total == expected
