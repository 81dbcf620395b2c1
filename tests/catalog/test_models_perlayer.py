"""Per-layer-attention and recurrent-hybrid families from the hand map (OpenELM, MiniMax-01,
Jamba 1.5 Large, Llama Nemotron Ultra, Mamba-2, Mamba2-Hybrid): parameter counts against
published figures, and the layer-pattern helpers against the shapes their sources print."""
from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tpscalc.catalog.schema import Architecture
from tpscalc.estimate.memory import kv_cache_bytes
from tpscalc.estimate.tensors import tensor_inventory

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import archfamilies

# Exact safetensors counts the Hugging Face pages show (llmfit v1.1.17 parameters_raw).
ArchOf = Callable[[str], Architecture]


@pytest.mark.parametrize(("name", "expected"), [
    ("OpenELM-270M", 271_527_168),  # https://huggingface.co/apple/OpenELM-270M
    ("OpenELM-450M", 457_179_136),  # https://huggingface.co/apple/OpenELM-450M
    ("OpenELM-1.1B", 1_079_891_456),  # https://huggingface.co/apple/OpenELM-1_1B
    ("OpenELM-3B", 3_036_647_424),  # https://huggingface.co/apple/OpenELM-3B
    ("MiniMax-Text-01", 456_089_655_296),  # https://huggingface.co/MiniMaxAI/MiniMax-Text-01
    ("MiniMax-M1-40k", 456_089_655_296),  # https://huggingface.co/MiniMaxAI/MiniMax-M1-40k
    ("Jamba 1.5-Large", 398_555_145_696),  # https://huggingface.co/ai21labs/AI21-Jamba-Large-1.5
    ("Jamba 1.6 Large", 398_555_145_696),  # https://huggingface.co/ai21labs/AI21-Jamba-Large-1.6
    # https://huggingface.co/nvidia/Llama-3_1-Nemotron-Ultra-253B-v1
    ("Llama Nemotron Ultra 253B", 253_401_268_224),
])
def test_exact_safetensors_counts(arch_of: ArchOf, name: str, expected: int) -> None:
    assert arch_of(name).params_total == expected


# Rounded figures the developers published: total and active (B), relative tolerance.
@pytest.mark.parametrize(("name", "total_b", "rel"), [
    ("Mamba 2, 2.7B", 2.7, 0.01),  # https://huggingface.co/state-spaces/mamba2-2.7b
    ("Mamba2-Hybrid", 8.66, 0.005),  # Epoch AI; https://huggingface.co/nvidia/mamba2-hybrid-8b-3t-4k
])
def test_published_totals(arch_of: ArchOf, name: str, total_b: float, rel: float) -> None:
    assert arch_of(name).params_total == pytest.approx(total_b * 1e9, rel=rel)


def test_minimax_active_parameters(arch_of: ArchOf) -> None:
    """MiniMax-Text-01's card: 45.9 B activated per token, counted without the embeddings
    (ours leaves out the input table only: the output head is read per token)."""
    arch = arch_of("MiniMax-Text-01")
    head = arch.vocab_size * arch.hidden_size  # untied output matrix
    assert (arch.params_active or 0) - head == pytest.approx(45.9e9, rel=0.002)
    assert arch.layer_mixers and arch.layer_mixers.count("A") == 10  # softmax every 8th layer


def test_jamba_large_active_parameters(arch_of: ArchOf) -> None:
    """Jamba-1.5-Large: 94 B active parameters (arXiv:2408.12570, abstract)."""
    assert arch_of("Jamba 1.5-Large").params_active == pytest.approx(94e9, rel=0.005)


def test_openelm_layer_heads_as_printed() -> None:
    """OpenELM-270M layer 0 prints query_heads=12, key_heads=3, qkv_proj out_features=1152
    (the HF module repr); the last layer (qkv multiplier 1.0) has 1280 / 64 = 20 heads."""
    f = archfamilies.openelm_fields({
        "num_transformer_layers": 16, "model_dim": 1280, "head_dim": 64, "num_gqa_groups": 4,
        "qkv_multipliers": [0.5, 1.0], "ffn_multipliers": [0.5, 4.0]})
    assert f["layer_num_heads"][0] == 12 and f["layer_num_kv_heads"][0] == 3
    assert (12 + 2 * 3) * 64 == 1152
    assert f["layer_num_heads"][-1] == 20 and f["layer_num_kv_heads"][-1] == 5
    assert f["layer_intermediate_sizes"][0] == 768  # make_divisible(0.5 x 1280, 256)
    assert f["layer_intermediate_sizes"][-1] == 5120  # 4.0 x 1280


def test_openelm_kv_cache_per_layer(arch_of: ArchOf) -> None:
    """Per token, the cache holds each layer's own KV heads (2 x kv x 64 values, f16)."""
    arch = arch_of("OpenELM-270M")
    assert arch.layer_num_kv_heads is not None
    per_token = sum(2 * kv * 64 * 2 for kv in arch.layer_num_kv_heads)
    assert kv_cache_bytes(arch, 1000) == 1000 * per_token
    assert per_token < arch.num_layers * 2 * arch.num_kv_heads * 64 * 2  # below the uniform max
    k0 = next(t for t in tensor_inventory(arch) if t.name == "attn_k" and t.layer == 0)
    assert k0.n_rows == 3 * 64


def test_megatron_hybrid_pattern_reproduces_the_published_override() -> None:
    """Megatron-LM examples/mamba/train.sh (800M scale) passes this override, equal to its
    automatic allocation for 48 layers, attention ratio 0.08, MLP ratio 0.5."""
    assert archfamilies.megatron_hybrid_pattern(48, 0.08, 0.5) == (
        "M-M-M--M-*M-M-M-M--*M-M-M-M-*M--M-M-M-*M-M--M-M-")
    p = archfamilies.megatron_hybrid_pattern(56, 0.08, 0.5)
    assert (p.count("M"), p.count("*"), p.count("-")) == (24, 4, 28)  # arXiv:2406.07887


def test_pure_mamba2_caches_no_kv(arch_of: ArchOf) -> None:
    """Mamba-2 2.7B: a fixed recurrent state, no growing cache: 64 layers x (3 x (5120 + 2 x 128)
    conv values + 5120 x 128 state values) x 4 bytes (f32)."""
    arch = arch_of("Mamba 2, 2.7B")
    state = 64 * (3 * (5120 + 2 * 128) + 5120 * 128) * 4
    assert kv_cache_bytes(arch, 0) == kv_cache_bytes(arch, 100_000) == state
