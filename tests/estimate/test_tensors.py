"""Parameter counts from the tensor inventory, family by family, against published counts."""
from __future__ import annotations

import pytest

from tpscalc.catalog.schema import Architecture
from tpscalc.estimate.tensors import (
    active_fraction,
    is_linear_attention_layer,
    parameter_counts,
    tensor_inventory,
)

# Facts typed from each model's config.json; expected totals are the safetensors counts the
# Hugging Face model pages show (llmfit's parameters_raw), or llama.cpp's printed count.
LLAMA2_7B = Architecture(num_layers=32, hidden_size=4096, intermediate_size=11008,
                         num_attention_heads=32, num_kv_heads=32, head_dim=128, vocab_size=32000)
LLAMA3_8B = Architecture(num_layers=32, hidden_size=4096, intermediate_size=14336,
                         num_attention_heads=32, num_kv_heads=8, head_dim=128, vocab_size=128256)
QWEN25_7B = Architecture(num_layers=28, hidden_size=3584, intermediate_size=18944,
                         num_attention_heads=28, num_kv_heads=4, head_dim=128, vocab_size=152064,
                         attention_bias=True)
QWEN3_8B = Architecture(num_layers=36, hidden_size=4096, intermediate_size=12288,
                        num_attention_heads=32, num_kv_heads=8, head_dim=128, vocab_size=151936,
                        qk_norm=True)
GEMMA2_9B = Architecture(num_layers=42, hidden_size=3584, intermediate_size=14336,
                         num_attention_heads=16, num_kv_heads=8, head_dim=256, vocab_size=256000,
                         tied_embeddings=True, post_norms=True, sliding_window=4096,
                         sliding_window_layers=21)
STARCODER2_15B = Architecture(num_layers=40, hidden_size=6144, intermediate_size=24576,
                              num_attention_heads=48, num_kv_heads=4, head_dim=128,
                              vocab_size=49152, ffn_gated=False, linear_bias=True, norm_bias=True)
MIXTRAL_8X7B = Architecture(num_layers=32, hidden_size=4096, num_attention_heads=32,
                            num_kv_heads=8, head_dim=128, vocab_size=32000, num_experts=8,
                            num_experts_active=2, moe_intermediate_size=14336)
QWEN3_30B_A3B = Architecture(num_layers=48, hidden_size=2048, num_attention_heads=32,
                             num_kv_heads=4, head_dim=128, vocab_size=151936, qk_norm=True,
                             num_experts=128, num_experts_active=8, moe_intermediate_size=768)
DEEPSEEK_V3 = Architecture(num_layers=61, hidden_size=7168, intermediate_size=18432,
                           num_attention_heads=128, num_kv_heads=128, head_dim=192,
                           vocab_size=129280, num_experts=256, num_experts_active=8,
                           num_shared_experts=1, moe_intermediate_size=2048, first_dense_layers=3,
                           kv_lora_rank=512, q_lora_rank=1536, qk_rope_head_dim=64,
                           qk_nope_head_dim=128, v_head_dim=128)
QWEN3_NEXT_80B = Architecture(num_layers=48, hidden_size=2048, num_attention_heads=16,
                              num_kv_heads=2, head_dim=256, vocab_size=151936, qk_norm=True,
                              attn_output_gate=True, linear_attention_layers=36,
                              linear_num_key_heads=16, linear_key_head_dim=128,
                              linear_num_value_heads=32, linear_value_head_dim=128,
                              num_experts=512, num_experts_active=10, num_shared_experts=1,
                              moe_intermediate_size=512)


@pytest.mark.parametrize(("arch", "expected", "rel"), [
    (LLAMA2_7B, 6_738_415_616, 0.0),  # meta-llama/Llama-2-7b-hf
    (LLAMA3_8B, 8_030_261_248, 0.0),  # meta-llama/Meta-Llama-3-8B
    (QWEN25_7B, 7_615_616_512, 0.0),  # Qwen/Qwen2.5-7B (q/k/v biases)
    (QWEN3_8B, 8_190_735_360, 0.0),  # Qwen/Qwen3-8B (q/k norms)
    (GEMMA2_9B, 9_241_705_984, 0.0),  # google/gemma-2-9b (tied, post-norms)
    (STARCODER2_15B, 15_957_889_024, 0.0),  # bigcode/starcoder2-15b (biases, LayerNorm, no gate)
    (MIXTRAL_8X7B, 46_702_792_704, 0.0),  # mistralai/Mixtral-8x7B-v0.1
    (QWEN3_30B_A3B, 30_532_122_624, 0.0),  # Qwen/Qwen3-30B-A3B
    (DEEPSEEK_V3, 671_000_000_000, 0.001),  # DeepSeek-V3 paper: 671 B without the MTP module
    (QWEN3_NEXT_80B, 79_670_000_000, 0.001),  # llama.cpp qwen3next GGUF: 79.67 B
])
def test_total_parameters_match_published_counts(arch: Architecture, expected: int,
                                                  rel: float) -> None:
    total, _ = parameter_counts(arch)
    assert total == pytest.approx(expected, rel=rel, abs=0)


# Active = what a token reads: routed experts at active/total and the output head, not the
# token-embedding table (OpenAI counts gpt-oss this way). Mistral and Qwen count the table too,
# so it is added back where their figure is the reference.
@pytest.mark.parametrize(("arch", "expected", "with_embedding"), [
    (MIXTRAL_8X7B, 12_879_925_248, True),  # Mistral: "12.9 B active parameters"
    (DEEPSEEK_V3, 37_000_000_000, False),  # DeepSeek-V3 paper: 37 B activated (routed at 8/256)
    (QWEN3_30B_A3B, 3_350_000_000, True),  # Qwen3 model card: 3.3 B activated
])
def test_active_parameters_of_moe(arch: Architecture, expected: int, with_embedding: bool) -> None:
    _, active = parameter_counts(arch)
    if with_embedding:
        active += arch.vocab_size * arch.hidden_size
    assert active == pytest.approx(expected, rel=0.02)


def test_dense_active_is_total_without_the_embedding_table() -> None:
    total, active = parameter_counts(LLAMA3_8B)
    assert total - active == 128256 * 4096  # the token-embedding table (untied)


def test_tied_active_counts_the_shared_table_once_as_the_head() -> None:
    total, active = parameter_counts(GEMMA2_9B)
    assert total == active


def test_starcoder2_has_no_gate_and_biases() -> None:
    names = {t.name for t in tensor_inventory(STARCODER2_15B) if t.layer == 0}
    assert "ffn_gate" not in names
    assert {"ffn_up.bias", "ffn_down.bias", "attn_output.bias", "attn_norm.bias"} <= names


def test_gemma2_post_norms() -> None:
    names = [t.name for t in tensor_inventory(GEMMA2_9B) if t.layer == 3]
    assert names.count("post_attention_norm") == 1 and names.count("post_ffw_norm") == 1


def test_qwen3_next_layer_pattern() -> None:
    """full_attention_interval = 4: layers 3, 7, ... keep attention; the rest are DeltaNet."""
    linear = [i for i in range(48) if is_linear_attention_layer(QWEN3_NEXT_80B, i)]
    assert len(linear) == 36 and 3 not in linear and 0 in linear
    layer0 = {t.name for t in tensor_inventory(QWEN3_NEXT_80B) if t.layer == 0}
    layer3 = {t.name for t in tensor_inventory(QWEN3_NEXT_80B) if t.layer == 3}
    assert "ssm_in" in layer0 and "attn_q" not in layer0
    assert "attn_q" in layer3 and "ssm_in" not in layer3


def test_shared_experts_always_read() -> None:
    inv = tensor_inventory(DEEPSEEK_V3)
    shexp = next(t for t in inv if t.name == "ffn_up_shexp")
    exps = next(t for t in inv if t.name == "ffn_up_exps")
    assert active_fraction(DEEPSEEK_V3, shexp) == 1.0
    assert active_fraction(DEEPSEEK_V3, exps) == pytest.approx(8 / 256)
    assert not any(t.name.endswith("_exps") for t in inv if t.layer is not None and t.layer < 3)


def test_token_embd_read_only_when_tied() -> None:
    emb = tensor_inventory(GEMMA2_9B)[0]
    assert active_fraction(GEMMA2_9B, emb) == 1.0
    assert active_fraction(LLAMA2_7B, tensor_inventory(LLAMA2_7B)[0]) == 0.0


# Granite-4.0-H-Tiny: GGUF dump of granite-4.0-h-tiny (granitehybrid.*: 1536 wide, 48 Mamba-2
# heads, d_inner 3072, d_state 128, 1 group; attention on layers 5, 15, 25, 35; 666 tensors).
GRANITE_H_TINY = Architecture(num_layers=40, hidden_size=1536, num_attention_heads=12,
                              num_kv_heads=4, head_dim=128, vocab_size=100352,
                              tied_embeddings=True, num_experts=64, num_experts_active=6,
                              moe_intermediate_size=512, num_shared_experts=2,
                              layer_mixers="".join("A" if i % 10 == 5 else "M" for i in range(40)),
                              ssm_inner_size=3072, ssm_state_size=128, ssm_num_heads=48)


def test_mamba2_block_shapes_match_the_gguf() -> None:
    """blk.0 of granite-4.0-h-tiny: ssm_in 1536 x 6448, ssm_conv1d 4 x 3328, ssm_out 3072 x 1536."""
    inv = tensor_inventory(GRANITE_H_TINY)
    assert len(inv) == 666
    layer0 = {t.name: t for t in inv if t.layer == 0}
    assert (layer0["ssm_in"].n_cols, layer0["ssm_in"].n_rows) == (1536, 6448)  # 2*3072+2*128+48
    assert (layer0["ssm_conv1d"].n_cols, layer0["ssm_conv1d"].n_rows) == (4, 3328)
    assert layer0["ssm_norm"].n_elements == 3072 and layer0["ssm_a"].n_elements == 48
    assert "attn_q" not in layer0 and {"attn_norm", "ffn_norm"} <= set(layer0)
    assert parameter_counts(GRANITE_H_TINY)[0] == 6_939_037_248  # HF safetensors count


def test_mamba_layers_hold_no_kv_cache() -> None:
    assert GRANITE_H_TINY.linear_attention_layers == 36
    assert not is_linear_attention_layer(GRANITE_H_TINY, 5)
    assert is_linear_attention_layer(GRANITE_H_TINY, 0)


def test_single_block_layers_have_one_norm() -> None:
    """Nemotron-H style: a Mamba-only, attention-only or MLP-only block has just attn_norm."""
    arch = Architecture(num_layers=3, hidden_size=64, intermediate_size=256,
                        num_attention_heads=4, num_kv_heads=2, head_dim=16, vocab_size=100,
                        ffn_gated=False, layer_mixers="MA-", layer_ffns="--D",
                        ssm_inner_size=128, ssm_state_size=16, ssm_num_heads=8, ssm_groups=2)
    by_layer = [[t.name for t in tensor_inventory(arch) if t.layer == i] for i in range(3)]
    assert [names.count("attn_norm") + names.count("ffn_norm") for names in by_layer] == [1, 1, 1]
    assert by_layer[2] == ["attn_norm", "ffn_up", "ffn_down"]
    # Hand count: Mamba-2 layer = norm 64 + ssm_in 64*(2*128+2*2*16+8) + conv 4*192 + conv bias
    # 192 + dt/a/d 3*8 + ssm_norm 128 + ssm_out 128*64.
    mamba = 64 + 64 * 328 + 4 * 192 + 192 + 24 + 128 + 128 * 64
    attn = 64 + 64 * 64 + 2 * 64 * 32 + 64 * 64
    mlp = 64 + 2 * 64 * 256
    assert parameter_counts(arch)[0] == 2 * 100 * 64 + 64 + mamba + attn + mlp


def test_mamba1_block_hand_count() -> None:
    """Mamba-1 (Jamba's dt/B/C norms on): llama.cpp LLM_ARCH_JAMBA shapes."""
    arch = Architecture(num_layers=1, hidden_size=32, num_attention_heads=1, num_kv_heads=1,
                        head_dim=32, vocab_size=10, layer_mixers="S", layer_ffns="-",
                        ssm_inner_size=64, ssm_state_size=16, ssm_dt_rank=2, ssm_dt_norms=True)
    block = (32 * 128 + 4 * 64 + 64 + 64 * (2 + 32) + 2 * 64 + 64 + 16 * 64 + 64 + 64 * 32
             + 2 + 16 + 16)
    assert parameter_counts(arch)[0] == 2 * 10 * 32 + 32 + 32 + block


def test_nas_layers_and_llama4_interleave() -> None:
    """NAS: no-op attention and per-layer FFN widths; Llama 4: MoE on every 2nd layer."""
    nas = Architecture(num_layers=2, hidden_size=64, num_attention_heads=4, num_kv_heads=2,
                       head_dim=16, vocab_size=10, layer_mixers="A-",
                       layer_intermediate_sizes=(128, 0))
    names = [t.name for t in tensor_inventory(nas) if t.layer == 1]
    assert names == []  # attention no-op and FFN width 0: an empty layer
    assert nas.linear_attention_layers == 1
    l4 = Architecture(num_layers=4, hidden_size=64, intermediate_size=256, num_attention_heads=4,
                      num_kv_heads=2, head_dim=16, vocab_size=10, num_experts=4,
                      num_experts_active=1, moe_intermediate_size=32, num_shared_experts=1,
                      layer_ffns="DEDE")
    moe_layers = sorted({t.layer for t in tensor_inventory(l4) if t.name == "ffn_up_exps"})
    assert moe_layers == [1, 3]


def test_parallel_hybrid_layer_hand_count() -> None:
    """Falcon-H1 "P" layer: attention and Mamba-2 on one input norm, then the FFN on its own."""
    arch = Architecture(num_layers=1, hidden_size=64, intermediate_size=128, num_attention_heads=4,
                        num_kv_heads=2, head_dim=16, vocab_size=10, layer_mixers="P",
                        ssm_inner_size=64, ssm_state_size=8, ssm_num_heads=4, ssm_groups=2)
    names = [t.name for t in tensor_inventory(arch) if t.layer == 0]
    assert names.count("attn_norm") == 1 and names.count("ffn_norm") == 1
    assert "attn_q" in names and "ssm_in" in names
    assert arch.linear_attention_layers == 0  # the attention half keeps a KV cache
    # attention: q, o 64x64; k, v 64x32. Mamba-2: conv_dim 64 + 2*2*8 = 96; ssm_in rows
    # 96 + 64 + 4; conv 4 x 96 + bias 96; dt, a, d 3 x 4; norm 64; out 64x64. FFN: 3 x 64x128.
    attn = 2 * 64 * 64 + 2 * 64 * 32
    mamba = 64 * 164 + 4 * 96 + 96 + 12 + 64 + 64 * 64
    ffn = 3 * 64 * 128
    layer = 64 + attn + mamba + 64 + ffn
    assert parameter_counts(arch)[0] == 2 * 10 * 64 + 64 + layer


def test_latent_moe_experts_read_and_write_the_latent() -> None:
    """moe_latent_size: the routed experts are latent x FFN, the router and the shared expert stay
    at the hidden width, and two hidden x latent projections wrap the experts (llama.cpp's
    ffn_latent_down / ffn_latent_up)."""
    from tpscalc.catalog.schema import Architecture
    from tpscalc.estimate.tensors import tensor_inventory

    arch = Architecture(num_layers=1, hidden_size=4096, num_attention_heads=32, num_kv_heads=2,
                        head_dim=128, vocab_size=1000, num_experts=8, num_experts_active=2,
                        moe_intermediate_size=512, num_shared_experts=1, moe_latent_size=1024,
                        ffn_gated=False)
    shapes = {t.name: (t.n_cols, t.n_rows, t.n_experts) for t in tensor_inventory(arch)
              if t.layer == 0 and t.name.startswith("ffn")}
    assert shapes["ffn_up_exps"] == (1024, 512, 8) and shapes["ffn_down_exps"] == (512, 1024, 8)
    assert shapes["ffn_gate_inp"] == (4096, 8, 1) and shapes["ffn_up_shexp"] == (4096, 512, 1)
    assert shapes["ffn_latent_down"] == (4096, 1024, 1)
    assert shapes["ffn_latent_up"] == (1024, 4096, 1)
    plain = arch.model_copy(update={"moe_latent_size": None})
    assert arch.expert_width == 1024 and plain.expert_width == 4096
