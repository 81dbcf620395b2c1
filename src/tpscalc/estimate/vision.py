"""Memory of a vision-language model's image encoder, as llama.cpp loads it: a separate
`mmproj` GGUF (the ViT and its projector) at f16, plus the encoder's own compute buffer.

Pure functions; sizes are bytes. The encoder is optional: `--text-only` (llama.cpp run without
`--mmproj`) leaves it out.
"""
from __future__ import annotations

from tpscalc.catalog.schema import VisionEncoder

# mmproj files are published at f16 (llama.cpp's convert_hf_to_gguf.py --mmproj default, and
# the mmproj-F16.gguf of ggml-org's and unsloth's model repositories).
MMPROJ_BYTES_PER_PARAM = 2
F32_BYTES = 4
# llama.cpp reserves the encoder's compute buffer with a warm-up image: 1472 x 1472 pixels for
# the Qwen-VL family (log in https://github.com/ggml-org/llama.cpp/pull/22673: "warmup with
# image size = 1472 x 1472", "CUDA0 compute buffer size = 223.30 MiB" for Qwen3.5-4B's 24-layer,
# 1024-wide ViT with patch 16).
WARMUP_IMAGE_SIDE_PX = 1472


def vision_parameters(v: VisionEncoder) -> int:
    """Parameters of the encoder and its projector (Qwen2-VL/2.5-VL/3-VL ViT layout, transformers'
    modeling_qwen2_5_vl.py: Conv3d patch embedding without bias; per block two norms, fused qkv
    and an output projection with biases, an MLP with biases; a 2x2 patch merger of two linears)."""
    h, ff = v.hidden_size, v.intermediate_size
    norm = 2 * h if v.layer_norm else h
    patch = 3 * v.temporal_patch_size * v.patch_size ** 2 * h + (h if v.patch_bias else 0)
    attention = 3 * h * h + 3 * h + h * h + h
    mlp = (3 * h * ff + 2 * ff + h) if v.ffn_gated else (2 * h * ff + ff + h)
    block = 2 * norm + attention + mlp
    merged = h * v.spatial_merge_size ** 2
    linears = merged * merged + merged + merged * v.out_hidden_size + v.out_hidden_size
    merger = norm + linears
    # DeepStack mergers normalise after the 2x2 shuffle (over merged, LayerNorm)
    deepstack = v.extra_mergers * (2 * merged + linears)
    return patch + v.position_embeddings * h + v.num_layers * block + merger + deepstack


def vision_weights_bytes(v: VisionEncoder) -> int:
    """Bytes of the mmproj file's weights at f16."""
    return vision_parameters(v) * MMPROJ_BYTES_PER_PARAM


def vision_compute_bytes(v: VisionEncoder) -> int:
    """The encoder's compute buffer for the warm-up image: per patch the FFN activations plus
    three hidden-wide f32 rows (flash attention: no patches² scores). For the Qwen3.5-4B ViT of
    the cited log it gives 231 MiB against the 223 MiB llama.cpp printed."""
    patches = (WARMUP_IMAGE_SIDE_PX // v.patch_size) ** 2
    return patches * (v.intermediate_size + 3 * v.hidden_size) * F32_BYTES


def vision_bytes(v: VisionEncoder | None) -> int:
    """Weights plus compute buffer of the image encoder, bytes (0 without one)."""
    if v is None:
        return 0
    return vision_weights_bytes(v) + vision_compute_bytes(v)
