"""Decoder-only models joined through hand-map rows (tools/data/model_architecture_map.csv):
each family's computed parameter count checked against a figure its developers published."""
from __future__ import annotations

from collections.abc import Callable

import pytest

from tpscalc.catalog.schema import Architecture, Model

# TeleChat: the attention output and FFN down projections carry a bias the schema does not model
# (2 x hidden per layer); with it, the count equals the checkpoint index's total_size / bytes.
ArchOf = Callable[[str], Architecture]


@pytest.mark.parametrize(("name", "total_size_bytes", "bytes_per_param"), [
    # https://github.com/Tele-AI/Telechat/blob/master/models/7B/pytorch_model.bin.index.json (fp16)
    ("TeleChat-7B", 14_400_036_864, 2),
    # https://github.com/Tele-AI/Telechat/blob/master/models/12B-V2/pytorch_model.bin.index.json
    # (fp16)
    ("TeleChat-12B", 24_772_864_000, 2),
    # https://github.com/Tele-AI/TeleChat2/blob/main/model/115B/model.safetensors.index.json (fp32)
    ("Telechat2-115B", 453_131_665_408, 4),
])
def test_telechat_matches_checkpoint_index(arch_of: ArchOf, name: str,
                                           total_size_bytes: int, bytes_per_param: int) -> None:
    arch = arch_of(name)
    unmodelled_biases = 2 * arch.hidden_size * arch.num_layers
    assert arch.params_total + unmodelled_biases == total_size_bytes // bytes_per_param


def test_telechat2_35b_near_its_name(arch_of: ArchOf) -> None:
    """The 35B yaml gives no KV-head or tie setting: multi-head and untied give 35.4 B."""
    assert arch_of("TeleChat2-35B").params_total == pytest.approx(35e9, rel=0.02)


def test_phi3_small_exact_safetensors_count(arch_of: ArchOf) -> None:
    """llmfit v1.1.17's safetensors count of microsoft/Phi-3-small-128k-instruct."""
    arch = arch_of("phi-3-small 7.4B")
    assert arch.params_total == 7_392_272_384
    assert arch.ffn_gated and arch.linear_bias and arch.norm_bias and arch.tied_embeddings


def test_nemotron_h_47b(models: dict[str, Model], arch_of: ArchOf) -> None:
    """47B per NVIDIA (Megatron-Bridge docs/models/llm/nemotronh.md); 5 attention layers of 98."""
    arch = arch_of("Nemotron-H 47B")
    assert arch.params_total == pytest.approx(47e9, rel=0.01)
    assert arch.layer_mixers is not None and arch.layer_mixers.count("A") == 5
    assert arch.layer_mixers.count("M") == 45 and arch.layer_ffns is not None
    assert arch.layer_ffns.count("D") == 48
    assert arch.linear_attention_layers == 98 - 5


def test_lapa_is_gemma3_12b_with_a_larger_vocabulary(arch_of: ArchOf) -> None:
    """Lapa v0.1.2: Gemma 3 12B's decoder with a larger vocabulary.

    No attention bias; vocabulary 262,208 instead of 262,144.
    """
    lapa, gemma = arch_of("Lapa LLM"), arch_of("Gemma 3 12B")
    assert lapa.params_total - gemma.params_total == (262_208 - 262_144) * 3840
    assert lapa.sliding_window_layers == gemma.sliding_window_layers == 40


def test_gigachat_lite_moe(arch_of: ArchOf) -> None:
    """ai-sage/GigaChat-20B-A3B-base safetensors count 20,589,299,712 (llmfit v1.1.17)."""
    arch = arch_of("GigaChat Lite (GigaChat-20B-A3B)")
    assert arch.is_moe and arch.num_experts == 64 and arch.num_experts_active == 6
    assert arch.params_total == pytest.approx(20_589_299_712, rel=0.002)
    assert arch.params_active is not None and arch.params_active < 3.3e9


def test_minicpm_1b_non_embedding_count_is_epochs(arch_of: ArchOf) -> None:
    """Epoch gives 1,247,442,432 for MiniCPM-1.2B: the paper's non-embedding count (tied)."""
    arch = arch_of("MiniCPM-1.2B")
    assert arch.tied_embeddings
    assert arch.params_total - arch.vocab_size * arch.hidden_size == 1_247_442_432


def test_minicpm3_uses_latent_attention(arch_of: ArchOf) -> None:
    """MLA: the cache holds kv_lora_rank + qk_rope_head_dim per token and layer."""
    arch = arch_of("MiniCPM-3-4B")
    assert arch.is_mla and arch.kv_lora_rank == 256 and arch.qk_rope_head_dim == 32
    assert arch.params_total == pytest.approx(4.0e9, rel=0.03)
