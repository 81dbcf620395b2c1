"""Attention by layer kind: each kind's own head shape in the KV cache and the attention work
(Gemma 4's global layers), KV-shared layers (Gemma 3n/4), and the depth slope they give."""
from __future__ import annotations

import pytest

from tpscalc.catalog import get_card, get_model
from tpscalc.catalog.schema import Architecture
from tpscalc.estimate import engine
from tpscalc.estimate.layers import attention_groups, full_attention_positions
from tpscalc.estimate.memory import kv_borrowed_bytes, kv_cache_bytes
from tpscalc.estimate.query import Query, Rig
from tpscalc.estimate.speed_terms import attended_tokens, attention_flops_per_token
from tpscalc.estimate.tensors import parameter_counts
from tpscalc.sources.hf_config import shape_fields

F16 = 2
# llama.cpp's sliding-window cache: pad(1024 + 512 micro-batch, 256) cells per layer.
SWA_CELLS = 1536


def arch_of(model: str) -> Architecture:
    arch = get_model(model).architecture
    assert arch is not None
    return arch


# Gemma 4 (google/gemma-4-31B config.json, transformers' Gemma4TextConfig): 50 sliding layers
# of 16 KV heads × 256 and 10 global layers of 4 KV heads × 512. K = V on the global layers
# still caches both (llama.cpp src/models/gemma4.cpp: Vcur = the K projection, RMS-normed,
# stored in the V rows), so a global layer holds half a sliding layer's values per token, as
# ik_llama.cpp's maintainer put it ("non-SWA layers have 2x smaller key and value dimensions
# than SWA layers", https://github.com/ikawrakow/ik_llama.cpp/issues/1607).
@pytest.mark.parametrize(("model", "n_full", "full_values", "n_swa", "swa_values"), [
    ("gemma-4-31B", 10, 2 * 4 * 512, 50, 2 * 16 * 256),
    ("gemma-4-26B-A4B", 5, 2 * 2 * 512, 25, 2 * 8 * 256),
])
def test_gemma4_kv_at_32k_by_layer_kind(model: str, n_full: int, full_values: int, n_swa: int,
                                        swa_values: int) -> None:
    arch = arch_of(model)
    expected = (n_full * 32768 * full_values + n_swa * SWA_CELLS * swa_values) * F16
    # 31B: 2.5 GiB in the global layers + 1.17 GiB in the sliding ones (6.17 GiB when the
    # global layers were counted with the sliding layers' 16 × 256)
    assert kv_cache_bytes(arch, 32768) == expected


def test_gemma4_global_layers_do_the_attention_work_of_512_wide_heads() -> None:
    """Attention FLOPs over the context come from the global layers alone beyond the window:
    per token and global layer, 32 query heads × (512 + 512) × 2 per earlier token."""
    arch = arch_of("gemma-4-31B")
    growth = attention_flops_per_token(arch, 65536) - attention_flops_per_token(arch, 32768)
    assert growth == 10 * 2 * 32 * (512 + 512) * 32768


# Multi-head latent attention as llama.cpp runs it (src/models/deepseek2.cpp): W_UK absorbed
# into the query, each of the 20 query heads attends over the cached latent, a 512 + 64 key
# (kv_lora_rank + qk_rope_head_dim, zai-org/GLM-4.7-Flash config.json) and the 512 latent as
# its value, not the decompressed 256-wide heads.
@pytest.mark.parametrize(("model", "heads", "layers", "rank", "rope"), [
    ("GLM-4.7-Flash", 20, 47, 512, 64),
    ("DeepSeek-V3", 128, 61, 512, 64),
])
def test_mla_attends_over_the_latent(model: str, heads: int, layers: int, rank: int,
                                     rope: int) -> None:
    (group,) = attention_groups(arch_of(model))
    assert (group.qk_dim, group.v_dim) == (rank + rope, rank)
    assert attention_flops_per_token(arch_of(model), 1000) == pytest.approx(
        2 * heads * (rank + rope + rank) * layers * 1000)


def test_gemma4_parameters_count_the_global_shape() -> None:
    """With 512-wide global heads and no V projection there, the 31B's text decoder counts
    30.70 B, the 30.7 B Google publishes; the sliding shape on every layer gave 30.15 B."""
    total, _ = parameter_counts(arch_of("gemma-4-31B"))
    assert total == pytest.approx(30.70e9, rel=2e-3)


def test_global_shape_read_from_a_gemma4_config() -> None:
    cfg = {"model_type": "gemma4", "text_config": {
        "model_type": "gemma4_text", "num_hidden_layers": 6, "hidden_size": 256,
        "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64,
        "global_head_dim": 128, "num_global_key_value_heads": 1, "attention_k_eq_v": True,
        "num_kv_shared_layers": 2, "vocab_size": 1000, "sliding_window": 512,
        "layer_types": ["sliding_attention"] * 5 + ["full_attention"]}}
    fields = shape_fields(cfg, "test")
    assert isinstance(fields, dict)
    assert (fields["global_head_dim"], fields["global_num_kv_heads"], fields["global_k_eq_v"],
            fields["kv_shared_layers"]) == (128, 1, True, 2)


# Gemma 3n E4B's shape (google/gemma-3n-E4B config.json: 35 layers, 4 sliding then 1 full,
# 8 query heads and 2 KV heads of 256, window 512, num_kv_shared_layers 15).
GEMMA3N = Architecture(num_layers=35, hidden_size=2048, intermediate_size=16384,
                       num_attention_heads=8, num_kv_heads=2, head_dim=256, vocab_size=262400,
                       sliding_window=512, sliding_window_layers=28, kv_shared_layers=15)


def test_kv_shared_layers_cache_nothing() -> None:
    """Only the first 20 layers hold a cache (16 sliding, 4 full); the last 15 (12 sliding,
    3 full) read theirs. A decoded token reads every attending layer's rows."""
    assert full_attention_positions(GEMMA3N) == frozenset(range(4, 35, 5))
    per_layer_token = 2 * 2 * 256 * F16
    swa_cells = 1024  # pad(512 + 512, 256)
    ctx = 32768
    own = (4 * ctx + 16 * swa_cells) * per_layer_token
    borrowed = (3 * ctx + 12 * swa_cells) * per_layer_token
    assert kv_cache_bytes(GEMMA3N, ctx) == own
    assert kv_borrowed_bytes(GEMMA3N, ctx) == borrowed
    unshared = GEMMA3N.model_copy(update={"kv_shared_layers": 0})
    assert kv_cache_bytes(unshared, ctx) == own + borrowed
    assert kv_borrowed_bytes(unshared, ctx) == 0
    # the shared layers still attend: the attention work is the unshared model's
    assert attended_tokens(GEMMA3N, ctx) == attended_tokens(unshared, ctx)
    groups = attention_groups(GEMMA3N)
    assert [(g.layers, g.cached_layers) for g in groups] == [(7, 4), (28, 16)]


def _decode_tps(model: str, depth: int, backend: str) -> float:
    e = engine.estimate(get_model(model), Rig.of(get_card("Ryzen AI Max+ 395")),
                        Query(context=70000, n_prompt=512, n_gen=32, depth=depth,
                              backend=backend), "Q4_K_M")
    assert e.decode is not None
    return float(e.decode.tokens_per_s)


# kyuz0/amd-strix-halo-toolboxes llama-bench rows (llamacpp_extra_calibration.csv), Q4_K_M,
# tg32 at -d 32768 ÷ tg128: gemma-4-26B-A4B 0.78 on ROCm and Vulkan, gemma-4-31B 0.77 / 0.79.
# With the global layers counted at the sliding shape (twice their KV, half their head size)
# the same calibration gave the 26B 0.68 on ROCm and 0.65 on Vulkan: too steep.
@pytest.mark.parametrize(("model", "backend", "measured"), [
    ("gemma-4-26B-A4B", "rocm", 0.78), ("gemma-4-26B-A4B", "vulkan", 0.78),
    ("gemma-4-31B", "rocm", 0.77), ("gemma-4-31B", "vulkan", 0.79),
])
def test_sliding_and_full_model_depth_slope(model: str, backend: str, measured: float) -> None:
    slope = _decode_tps(model, 32768, backend) / _decode_tps(model, 0, backend)
    assert slope == pytest.approx(measured, abs=0.08)
