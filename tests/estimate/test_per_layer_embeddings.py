"""Gemma 4's per-layer embeddings: counted in the file, read row by row, held nowhere.

Gemma 4 E2B and E4B give every layer a 256-wide embedding of the token, looked up in one
table of vocab × (layers × 256) (llama.cpp's per_layer_token_embd, created lazily in
src/models/gemma4.cpp: rows are read from the mapped file on demand). The table is over half
of the file and none of it is on the GPU or read in bulk per token.
"""
from __future__ import annotations

import pytest

from tpscalc.catalog import get_model
from tpscalc.catalog.schema import Architecture
from tpscalc.estimate.tensors import (
    TensorSpec,
    active_fraction,
    parameter_counts,
    tensor_inventory,
)
from tpscalc.estimate.weights import (
    resident_weights_bytes,
    role_bytes,
    tensor_bytes,
    tensor_ggml_type,
    weights_bytes,
    weights_read_per_token_bytes,
)
from tpscalc.sources.hf_config import architecture_from_config

# google/gemma-4-E2B's text config as ollama/ollama x/models/gemma4/gemma4_test.go copies it
E2B_CONFIG = {"architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4",
              "text_config": {
                  "model_type": "gemma4_text", "hidden_size": 1536, "num_hidden_layers": 35,
                  "intermediate_size": 6144, "num_attention_heads": 8, "num_key_value_heads": 1,
                  "head_dim": 256, "global_head_dim": 512, "vocab_size": 262144,
                  "max_position_embeddings": 131072, "sliding_window": 512,
                  "use_double_wide_mlp": True, "num_kv_shared_layers": 20,
                  "hidden_size_per_layer_input": 256, "vocab_size_per_layer_input": 262144,
                  "attention_k_eq_v": False, "tie_word_embeddings": True,
                  "layer_types": (["sliding_attention"] * 4 + ["full_attention"]) * 7}}


def _e2b() -> Architecture:
    return architecture_from_config(E2B_CONFIG, "gemma-4-E2B")


def _table(arch: Architecture) -> TensorSpec:
    return next(t for t in tensor_inventory(arch) if t.name == "per_layer_token_embd")


def test_the_config_gives_the_catalog_shape() -> None:
    arch = _e2b()
    assert arch.per_layer_input_size == 256
    # the 20 KV-shared layers have the double-wide FFN
    assert arch.layer_intermediate_sizes == (6144,) * 15 + (12288,) * 20
    assert (arch.qk_norm, arch.post_norms, arch.kv_shared_layers) == (True, True, 20)
    catalog = get_model("gemma-4-E2B").architecture
    assert catalog is not None
    assert parameter_counts(catalog) == parameter_counts(arch)


def test_count_is_the_text_checkpoint_less_the_unused_shared_kv() -> None:
    """A text-only E2B fine-tune's safetensors count 4,647,449,856 (llmfit's list); its 20
    KV-shared layers keep K and V projections and k_norms they never use (16 sliding:
    2 × 1536 × 256 each, 4 full: 2 × 1536 × 512, norms 16 × 256 + 4 × 512), which the GGUF
    drops. Active: what a token reads, the table left out: Google's "2.3B effective"."""
    unused = 16 * 2 * 1536 * 256 + 4 * 2 * 1536 * 512 + 16 * 256 + 4 * 512
    total, active = parameter_counts(_e2b())
    assert total == 4_647_449_856 - unused
    assert total - active == 262144 * 35 * 256  # only the table is not read
    assert active == pytest.approx(2.3e9, rel=0.02)


def test_the_table_is_typed_as_llama_quantize_types_it_and_held_nowhere() -> None:
    """llama-quantize treats per_layer_token_embd as a token embedding, and a tied one takes
    the output's type (Q6_K). A public GTX 1650 Ti rig's QAT Q4_0 file: 1.927 GB of Q6_K table
    and 1.407 GB the card holds (GitHub index file id 60041999923)."""
    arch = _e2b()
    table = _table(arch)
    assert tensor_ggml_type("Q4_0", table, arch) == "Q6_K"
    assert tensor_bytes(table, "Q6_K") == pytest.approx(1.927e9, rel=1e-3)
    assert resident_weights_bytes(arch, "Q4_0") == pytest.approx(1.407e9, rel=1e-3)
    assert weights_bytes(arch, "Q4_0") - resident_weights_bytes(arch, "Q4_0") == pytest.approx(
        tensor_bytes(table, "Q6_K"))


def test_a_token_reads_no_table_and_no_role_places_it() -> None:
    arch = _e2b()
    assert active_fraction(arch, _table(arch)) == 0.0
    # dense and tied: a token reads every held byte (the output head is token_embd's copy)
    assert weights_read_per_token_bytes(arch, "Q4_K_M") == pytest.approx(
        resident_weights_bytes(arch, "Q4_K_M"))
    roles = role_bytes(arch, "Q4_K_M")
    embd = next(t for t in tensor_inventory(arch) if t.name == "token_embd")
    assert roles["embedding"] == tensor_bytes(embd, tensor_ggml_type("Q4_K_M", embd, arch))


def test_without_per_layer_inputs_nothing_changes() -> None:
    plain = _e2b().model_copy(update={"per_layer_input_size": None})
    assert not any(t.name.startswith("per_layer") for t in tensor_inventory(plain))
    assert resident_weights_bytes(plain, "Q8_0") == weights_bytes(plain, "Q8_0")
