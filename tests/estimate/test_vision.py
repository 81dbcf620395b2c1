"""The image encoder's memory (estimate/vision.py) and the text-only switch."""
from __future__ import annotations

import pytest

from tpscalc import api
from tpscalc.catalog.schema import VisionEncoder
from tpscalc.estimate.vision import vision_bytes, vision_compute_bytes, vision_parameters

MIB = 2**20
# Qwen3.5-4B's ViT as llama.cpp printed it (https://github.com/ggml-org/llama.cpp/pull/22673):
# n_embd 1024, n_head 16, n_ff 4096, n_layer 24, patch 16, n_merge 2, projection_dim 2560.
QWEN35_4B_VIT = VisionEncoder(num_layers=24, hidden_size=1024, intermediate_size=4096,
                              num_heads=16, patch_size=16, temporal_patch_size=2,
                              spatial_merge_size=2, out_hidden_size=2560, layer_norm=True)


def test_compute_buffer_matches_the_logged_one() -> None:
    # "alloc_compute_meta: CUDA0 compute buffer size = 223.30 MiB" after a 1472 x 1472 warm-up
    assert vision_compute_bytes(QWEN35_4B_VIT) / MIB == pytest.approx(223.30, rel=0.05)


def test_weights_are_f16_parameters_and_none_without_an_encoder() -> None:
    assert vision_bytes(None) == 0
    assert vision_bytes(QWEN35_4B_VIT) == (2 * vision_parameters(QWEN35_4B_VIT)
                                           + vision_compute_bytes(QWEN35_4B_VIT))


def test_estimate_carries_the_encoder_and_text_only_drops_it() -> None:
    full = api.evaluate("Qwen2.5-VL-7B", "B200", context=32768)["memory"]
    text = api.evaluate("Qwen2.5-VL-7B", "B200", context=32768, text_only=True)["memory"]
    assert full["vision_gib"] > 0 and text["vision_gib"] == 0
    parts = ("weights_gib", "kv_cache_gib", "runtime_gib", "vision_gib")
    assert full["total_gib"] == pytest.approx(sum(full[k] for k in parts))
    assert full["total_gib"] - text["total_gib"] == pytest.approx(full["vision_gib"])


def test_text_models_have_no_encoder() -> None:
    assert api.evaluate("Llama 3-8B", "RTX 4090")["memory"]["vision_gib"] == 0
