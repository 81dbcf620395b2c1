"""KV cache, runtime buffers and the memory breakdown, against hand-worked and logged numbers."""
from __future__ import annotations

import pytest

from tpscalc.catalog import get_model
from tpscalc.catalog.schema import Architecture
from tpscalc.estimate.memory import (
    approx_architecture,
    backend_overhead_bytes,
    compute_buffer_bytes,
    kv_bytes_per_element,
    kv_cache_bytes,
    memory_breakdown,
    runtime_bytes,
)
from tpscalc.estimate.weights import weights_bytes

GIB, MIB = 2**30, 2**20
LLAMA2_7B = Architecture(num_layers=32, hidden_size=4096, intermediate_size=11008,
                         num_attention_heads=32, num_kv_heads=32, head_dim=128, vocab_size=32000)


def arch_of(model: str) -> Architecture:
    m = get_model(model)
    if m.architecture is None:
        pytest.skip(f"{model} has no architecture in the catalog")
    return m.architecture


def test_llama2_7b_f16_kv_at_4096_is_2_gib() -> None:
    """2 (K, V) × 32 layers × 32 heads × 128 × 2 B × 4096 tokens = 2^31 B."""
    assert kv_cache_bytes(LLAMA2_7B, 4096) == 2 * GIB


@pytest.mark.parametrize(("kv_type", "per_value"), [("f16", 2.0), ("q8_0", 34 / 32),
                                                    ("q4_0", 18 / 32), ("f32", 4.0)])
def test_kv_type_bytes_from_ggml_block_sizes(kv_type: str, per_value: float) -> None:
    assert kv_bytes_per_element(kv_type) == per_value
    assert kv_cache_bytes(LLAMA2_7B, 4096, kv_type) == pytest.approx(GIB * per_value)


# KV buffer sizes printed by llama.cpp (data/measured/llamacpp_memory_logs.csv), MiB.
@pytest.mark.parametrize(("model", "ctx", "kv_type", "mib"), [
    ("Llama 3-8B", 16384, "f16", 2048.00),       # Meta Llama 3.1 8B, Vulkan (same shape)
    ("Qwen3-235B-A22B", 32768, "q8_0", 3196.00),  # mainline log posted in ik_llama.cpp
    ("Qwen3-235B-A22B", 32768, "f16", 6016.00),
    ("Qwen3-30B-A3B", 32768, "f16", 3072.00),
    ("Gemma 3 4B", 131072, "f16", 2734.00),       # ollama: 5 global + 29 sliding (1024) layers
    ("DeepSeek-R1", 16384, "f16", 1098.00),       # MLA latent 512 + 64 rope, K only
    ("DeepSeek-R1", 32768, "q8_0", 1166.65),
])
def test_kv_cache_matches_llama_cpp_logs(model: str, ctx: int, kv_type: str, mib: float) -> None:
    assert kv_cache_bytes(arch_of(model), ctx, kv_type) / MIB == pytest.approx(mib, abs=0.05)


def test_sliding_window_layers_stop_growing() -> None:
    arch = arch_of("Gemma 3 4B")
    step_small = kv_cache_bytes(arch, 2048) - kv_cache_bytes(arch, 1024)
    step_large = kv_cache_bytes(arch, 65536) - kv_cache_bytes(arch, 64512)
    assert step_large < step_small  # beyond window + ubatch only the 5 global layers grow
    per_token_global = 5 * 2 * 4 * 256 * 2
    assert step_large == 1024 * per_token_global


def test_linear_attention_layers_hold_no_growing_cache() -> None:
    """Qwen3-Next: 36 of 48 layers are Gated DeltaNet; only 12 layers cache K/V.

    The DeltaNet layers hold a fixed state instead.
    """
    from tpscalc.estimate.memory import recurrent_state_bytes

    arch = arch_of("Qwen3-Next-80B-A3B")
    kv_only = kv_cache_bytes(arch, 4096) - recurrent_state_bytes(arch)
    assert kv_only == 12 * 4096 * 2 * arch.num_kv_heads * arch.head_dim * 2


def test_moe_changes_nothing_in_the_kv_cache() -> None:
    moe = LLAMA2_7B.model_copy(update={"num_experts": 8, "num_experts_active": 2})
    assert kv_cache_bytes(moe, 8192) == kv_cache_bytes(LLAMA2_7B, 8192)


def test_compressed_attention_adds_its_entries_beyond_the_window() -> None:
    """DeepSeek-V4 (compress_ratios): every layer keeps the window; a ratio-r layer adds one
    entry of head_dim per r tokens, the ratio-4 layers the indexer's key of index_head_dim too."""
    base = Architecture(num_layers=4, hidden_size=1024, num_attention_heads=8, num_kv_heads=1,
                        head_dim=512, vocab_size=1000, sliding_window=128,
                        sliding_window_layers=4)
    ratios = base.model_copy(update={"compress_ratios": (0, 4, 128, 4), "index_head_dim": 128})
    ctx = 8192
    extra = 2 * (ctx // 4) * (512 + 128) + (ctx // 128) * 512  # values, F16: 2 bytes each
    assert kv_cache_bytes(ratios, ctx) - kv_cache_bytes(base, ctx) == extra * 2


def test_mla_caches_the_latent_not_the_heads() -> None:
    arch = arch_of("DeepSeek-R1")
    assert kv_cache_bytes(arch, 1000) == 61 * 1000 * (512 + 64) * 2


# GPU compute buffers printed by mainline llama.cpp / ollama (llamacpp_memory_logs.csv), MiB;
# the formula is an empirical fit, held to 12 %.
GRANITE_8B = Architecture(num_layers=36, hidden_size=4096, intermediate_size=14336,
                          num_attention_heads=32, num_kv_heads=8, head_dim=128, vocab_size=49152)
PYTHIA_2_8B = Architecture(num_layers=32, hidden_size=2560, intermediate_size=10240,
                           num_attention_heads=32, num_kv_heads=32, head_dim=80,
                           vocab_size=50304, ffn_gated=False)
LLAMA31_8B = Architecture(num_layers=32, hidden_size=4096, intermediate_size=14336,
                          num_attention_heads=32, num_kv_heads=8, head_dim=128, vocab_size=128256)
GLM_Z1_32B = Architecture(num_layers=61, hidden_size=6144, intermediate_size=23040,
                          num_attention_heads=48, num_kv_heads=2, head_dim=128, vocab_size=151552)


@pytest.mark.parametrize(("arch", "ctx", "ubatch", "fa", "mib"), [
    (LLAMA31_8B, 16384, 1024, True, 613.01),  # Vulkan
    (GLM_Z1_32B, 32768, 512, True, 353.00),
    (GRANITE_8B, 32768, 512, False, 2144.00),  # ollama on Metal
    (PYTHIA_2_8B, 2048, 512, False, 162.00),   # ggml-org CI, V100
])
def test_compute_buffer_against_logs(arch: Architecture, ctx: int, ubatch: int, fa: bool,
                                     mib: float) -> None:
    assert compute_buffer_bytes(arch, ctx, ubatch, fa) / MIB == pytest.approx(mib, rel=0.10)


def test_compute_buffer_flat_with_flash_attention_growing_without() -> None:
    flat = compute_buffer_bytes(GRANITE_8B, 65536) - compute_buffer_bytes(GRANITE_8B, 4096)
    assert flat == 0
    grows = (compute_buffer_bytes(GRANITE_8B, 65536, flash_attn=False)
             - compute_buffer_bytes(GRANITE_8B, 32768, flash_attn=False))
    # the scores (ctx × n_ubatch × heads × 4 B) and the f32 mask (ctx × n_ubatch × 4 B)
    assert grows == 32768 * 512 * (32 + 1) * 4


def test_runtime_adds_the_backend_overhead() -> None:
    assert backend_overhead_bytes("cuda") == 457 * MIB   # ollama cudaMinimumMemory
    assert backend_overhead_bytes("metal") == 512 * MIB  # ollama metalMinimumMemory
    assert (runtime_bytes(LLAMA2_7B, "cuda", 4096) - compute_buffer_bytes(LLAMA2_7B, 4096)
            == 457 * MIB)
    with pytest.raises(ValueError, match="cuda"):
        backend_overhead_bytes("opengl")


def test_breakdown_sums_its_terms() -> None:
    m = memory_breakdown(LLAMA2_7B, 6.74e9, "Q4_K_M", 4096, "f16", "cuda")
    assert m.weights_gib == weights_bytes(LLAMA2_7B, "Q4_K_M") / GIB
    assert m.kv_cache_gib == 2.0
    assert m.total_gib == pytest.approx(m.weights_gib + m.kv_cache_gib + m.runtime_gib)
    assert not m.approximated


def test_breakdown_without_architecture_is_flagged_and_close_for_an_8b() -> None:
    """No architecture: weights from average bits, KV from a LLaMA-like shape (within 30 %)."""
    approx = memory_breakdown(None, 8.03e9, "Q4_K_M", 8192)
    exact = memory_breakdown(arch_of("Llama 3-8B"), 8.03e9, "Q4_K_M", 8192)
    assert approx.approximated
    assert approx.weights_gib == pytest.approx(exact.weights_gib, rel=0.01)
    assert approx.kv_cache_gib == pytest.approx(exact.kv_cache_gib, rel=0.3)


def test_approx_architecture_has_the_parameter_count() -> None:
    from tpscalc.estimate.tensors import parameter_counts

    for params in (7e9, 70e9, 400e9):
        total, _ = parameter_counts(approx_architecture(params))
        assert total == pytest.approx(params, rel=0.15)


def test_gated_deltanet_state_hand_worked() -> None:
    """Qwen3-Next-80B-A3B: 36 Gated DeltaNet layers, 32 value heads and 16 key heads of 128, conv 4.

    Per layer: conv 3 × (2·16·128 + 32·128) + state 32 · 128 · 128 = 548,864 f32 values
    (config.json of Qwen/Qwen3-Next-80B-A3B-Instruct; f32 per llama-memory-recurrent.cpp).
    """
    from tpscalc.catalog import get_model
    from tpscalc.estimate.memory import recurrent_state_bytes

    arch = get_model("Qwen3-Next-80B-A3B").architecture
    assert arch is not None
    assert recurrent_state_bytes(arch) == 36 * 548_864 * 4
    # The state does not grow with context: the KV cache difference is all attention layers.
    grow = kv_cache_bytes(arch, 8192) - kv_cache_bytes(arch, 4096)
    assert grow == 12 * 4096 * 2 * arch.num_kv_heads * arch.head_dim * 2


def test_mamba2_state_hand_worked() -> None:
    """A Mamba-2 layer's state, hand-worked.

    It holds (d_conv − 1)·(d_inner + 2·groups·d_state) + d_inner·d_state f32 values.
    """
    from tpscalc.estimate.memory import recurrent_state_bytes

    arch = Architecture(num_layers=2, hidden_size=1024, intermediate_size=2048,
                        num_attention_heads=8, num_kv_heads=8, head_dim=128, vocab_size=1000,
                        layer_mixers="MA", ssm_inner_size=2048, ssm_state_size=128,
                        ssm_num_heads=32, ssm_groups=1, linear_conv_kernel=4)
    assert recurrent_state_bytes(arch) == (3 * (2048 + 2 * 128) + 2048 * 128) * 4
