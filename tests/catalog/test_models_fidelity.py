"""One model per family whose import used to lose facts (issue 15): KV cache and parameter
counts pinned against a hand calculation from the cited config.json (tools/data/hf_configs/
and tools/data/model_architecture_map.csv keep the files and their URLs)."""
from __future__ import annotations

from collections.abc import Callable

import pytest

from tpscalc.catalog.schema import Architecture, Model
from tpscalc.estimate import engine
from tpscalc.estimate.memory import kv_cache_bytes, recurrent_state_bytes
from tpscalc.estimate.query import Query
from tpscalc.estimate.vision import WARMUP_IMAGE_SIDE_PX

ArchOf = Callable[[str], Architecture]
GIB = 2**30
CTX = 32768


def test_mla_deepseek_v25(arch_of: ArchOf) -> None:
    """https://huggingface.co/deepseek-ai/DeepSeek-V2.5/blob/main/config.json: 60 layers of
    5120, 128 heads, q_lora_rank 1536, kv_lora_rank 512, qk_rope 64, qk_nope 128, v 128; layer 0
    dense (12288), then 160 experts of 1536 (top-6) + 2 shared; vocab 102400, untied.
    llama.cpp caches the latent: (512 + 64) values per layer and token, f16."""
    arch = arch_of("DeepSeek-V2.5")
    assert kv_cache_bytes(arch, CTX) == 60 * (512 + 64) * 2 * CTX
    assert kv_cache_bytes(arch, CTX) / GIB == pytest.approx(2.11, rel=0.01)
    h, heads, vocab = 5120, 128, 102400
    attn = (h * 1536 + 1536 + 1536 * heads * 192 + h * 576 + 512 + 512 * heads * 256
            + heads * 128 * h)
    dense = 3 * h * 12288
    routed = 160 * 3 * h * 1536
    shared = 3 * h * 2 * 1536
    layers = 60 * (attn + 2 * h) + dense + 59 * (h * 160 + routed + shared)
    total = layers + 2 * vocab * h + h
    assert arch.params_total == total
    active = total - vocab * h - round(59 * routed * (1 - 6 / 160))
    assert arch.params_active == active
    assert active / 1e9 == pytest.approx(21, rel=0.01)  # DeepSeek: 21 B activated


def test_mla_kimi_k2_thinking(arch_of: ArchOf) -> None:
    """https://huggingface.co/moonshotai/Kimi-K2-Thinking/blob/main/config.json: 61 layers,
    kv_lora_rank 512 + qk_rope 64; 384 experts top-8 + 1 shared, first layer dense."""
    arch = arch_of("Kimi K2 Thinking")
    assert (arch.kv_lora_rank, arch.qk_rope_head_dim, arch.num_shared_experts,
            arch.first_dense_layers) == (512, 64, 1, 1)
    assert kv_cache_bytes(arch, CTX) == 61 * 576 * 2 * CTX
    assert kv_cache_bytes(arch, CTX) / GIB == pytest.approx(2.15, rel=0.01)
    assert arch.params_total / 1e12 == pytest.approx(1.03, rel=0.01)  # Moonshot: 1 T total


def test_sliding_window_gemma3_270m(arch_of: ArchOf) -> None:
    """https://huggingface.co/google/gemma-3-270m/blob/main/config.json: 18 layers, 3 global
    (every 6th), 15 with a 512-token window; 1 KV head of 256; hidden 640, FFN 2048, vocab
    262144, tied. llama.cpp keeps window + one micro-batch (512), padded to 256, per SWA layer."""
    arch = arch_of("Gemma 3 270M")
    assert (arch.sliding_window, arch.sliding_window_layers) == (512, 15)
    cells = 3 * CTX + 15 * 1024
    assert kv_cache_bytes(arch, CTX) == cells * 2 * 1 * 256 * 2
    assert kv_cache_bytes(arch, CTX) / GIB <= 0.2
    h = 640
    layer = h * 1024 + 2 * h * 256 + 1024 * h + 2 * 256 + 4 * h + 3 * h * 2048
    assert arch.params_total == 262144 * h + 18 * layer + h == 268_098_176


def test_hybrid_linear_attention_qwen3_next(arch_of: ArchOf) -> None:
    """https://huggingface.co/Qwen/Qwen3-Next-80B-A3B-Instruct/blob/main/config.json: 48 layers,
    full attention every 4th (12 layers, 2 KV heads of 256), 36 Gated DeltaNet layers (16 key
    heads and 32 value heads of 128, conv kernel 4) holding an f32 state instead of a cache."""
    arch = arch_of("Qwen3-Next-80B-A3B")
    state_values = 3 * (2 * 16 * 128 + 32 * 128) + 32 * 128 * 128
    assert recurrent_state_bytes(arch) == 36 * state_values * 4
    assert kv_cache_bytes(arch, CTX) == 12 * CTX * 2 * 2 * 256 * 2 + 36 * state_values * 4
    assert arch.params_total / 1e9 == pytest.approx(79.67, rel=0.001)  # llama.cpp GGUF: 79.67 B


def test_moe_shared_experts_glm45_air(arch_of: ArchOf) -> None:
    """https://huggingface.co/zai-org/GLM-4.5-Air/blob/main/config.json: 46 layers of 4096,
    96 heads and 8 KV heads of 128 with q/k/v bias; layer 0 dense (10944), then 128 experts of
    1408 (top-8) + 1 shared; vocab 151552, untied. (The MTP layer is not loaded for decode.)"""
    arch = arch_of("GLM-4.5-Air")
    assert kv_cache_bytes(arch, CTX) == 46 * 2 * 8 * 128 * 2 * CTX
    h, vocab = 4096, 151552
    attn = h * 12288 + 2 * h * 1024 + 12288 * h + 12288 + 2 * 1024
    routed = 128 * 3 * h * 1408
    layers = 46 * (attn + 2 * h) + 3 * h * 10944 + 45 * (h * 128 + routed + 3 * h * 1408)
    total = layers + 2 * vocab * h + h
    assert arch.params_total == total
    # Z.ai's 12B active leaves out both the embedding and the output head (hand map note).
    head = vocab * h
    assert arch.params_active == total - 2 * head - round(45 * routed * (1 - 8 / 128))
    assert arch.params_active == pytest.approx(12e9, rel=0.05)


def test_gpt_oss_active_count_keeps_the_unembedding(models: dict[str, Model]) -> None:
    """OpenAI's gpt-oss card counts 5.1 B active for gpt-oss-120b, unembedding included."""
    assert models["gpt-oss-120b"].parameters_active == pytest.approx(5.1e9, rel=0.05)


def test_vlm_qwen25_vl_7b(models: dict[str, Model]) -> None:
    """https://huggingface.co/Qwen/Qwen2.5-VL-7B-Instruct/blob/main/config.json vision_config:
    32 blocks of 1280 (RMSNorm, SwiGLU 3420 with biases, fused qkv with bias), patch 14 over 2
    frames, 2x2 merger into 3584. Safetensors: 8,292,166,656 in all, 7,615,616,512 of them the
    language model, so the encoder is 676,550,144."""
    model = models["Qwen2.5-VL-7B"]
    arch = model.architecture
    assert arch is not None and arch.vision is not None
    h, ff = 1280, 3420
    block = 2 * h + 3 * h * h + 3 * h + h * h + h + 3 * h * ff + 2 * ff + h
    merger = h + (4 * h) ** 2 + 4 * h + 4 * h * 3584 + 3584
    assert arch.vision.params_total == 3 * 2 * 14 * 14 * h + 32 * block + merger == 676_550_144
    assert arch.params_total == 7_615_616_512
    assert "language model + 0.68 B vision encoder" in model.parameters_note
    patches = (WARMUP_IMAGE_SIDE_PX // 14) ** 2
    vision = 676_550_144 * 2 + patches * (ff + 3 * h) * 4
    full = engine.memory_at(model, "Q4_K_M", Query(context=CTX))
    text = engine.memory_at(model, "Q4_K_M", Query(context=CTX, text_only=True))
    assert full.vision_gib * GIB == pytest.approx(vision)
    assert text.vision_gib == 0
    assert full.total_gib - text.total_gib == pytest.approx(full.vision_gib)


def test_hybrid_mla_and_delta_attention_kimi_linear(arch_of: ArchOf) -> None:
    """https://huggingface.co/moonshotai/Kimi-Linear-48B-A3B-Instruct/blob/main/config.json:
    27 layers, MLA (512 + 64 cached) on 7 (full_attn_layers 4, 8, ..., 24, 27), Kimi Delta
    Attention on 20 (32 heads of 128: a 128 x 128 f32 state per head, short conv 4 over q, k, v)."""
    arch = arch_of("Kimi Linear")
    assert arch.layer_mixers is not None and arch.layer_mixers.count("A") == 7
    state_values = 3 * 3 * 32 * 128 + 32 * 128 * 128
    assert kv_cache_bytes(arch, CTX) == 7 * 576 * 2 * CTX + 20 * state_values * 4
    assert arch.params_total / 49_122_681_728 == pytest.approx(1, abs=0.005)  # safetensors count
