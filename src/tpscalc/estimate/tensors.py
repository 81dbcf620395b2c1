"""The tensor inventory of a language model, named as llama.cpp names GGUF tensors.

One `TensorSpec` per tensor (per layer), so that the parameter count and the weight size at
any llama.cpp file type (whose rules depend on the tensor's name and layer) follow from the
architecture. Names follow llama.cpp's `LLM_TENSOR_*` table (src/llama-arch.cpp). Decoder-only
transformers and hybrids are built here; encoders, encoder-decoders and RWKV blocks in
`tensors_nondecoder.py`.
"""
from __future__ import annotations

import functools

from tpscalc.catalog.schema import Architecture
from tpscalc.estimate import tensors_nondecoder as nd
from tpscalc.estimate.layers import is_linear_attention_layer, layer_heads
from tpscalc.estimate.tensor_blocks import (
    TensorSpec,
    attention,
    dense_ffn,
    gated_delta_net,
    norm,
    vec,
)

# Tensors llama.cpp reads row by row from the mapped file, never loading them whole (Gemma 4's
# per-layer embeddings: TENSOR_READ_LAZY in src/models/gemma4.cpp; a GTX 1650 Ti holds E2B at
# -ngl 99 -c 8192 in 1,618 MiB with its 3.35 GB file, 1.93 GB of it this table).
LAZY_TENSORS = frozenset({"per_layer_token_embd"})

__all__ = ["LAZY_TENSORS", "TensorSpec", "active_fraction", "is_linear_attention_layer",
           "layer_heads", "parameter_counts", "tensor_inventory"]


def _mixer(arch: Architecture, i: int) -> list[TensorSpec]:
    """The token mixer of layer `i`: attention, a Mamba block, both, a linear map or nothing."""
    kind = arch.layer_mixers[i] if arch.layer_mixers else "A"
    if kind == "M":
        return _mamba2(arch, i)
    if kind == "S":
        return _mamba1(arch, i)
    if kind == "P":  # Falcon-H1: attention and Mamba-2 in parallel on the same input
        return attention(arch, i, full=True) + _mamba2(arch, i)
    if kind == "O":  # DeciLM / Nemotron NAS "replace_with_linear": only the output projection
        return [TensorSpec("attn_output", i, arch.hidden_size, arch.hidden_size)]
    if kind == "-":
        return []
    if kind == "G":  # gated delta-rule layer in an explicit pattern (Kimi Linear)
        return gated_delta_net(arch, i)
    if kind == "L":
        return nd.lightning_attention(arch, i)
    return attention(arch, i, full=arch.layer_mixers is not None)


def _mamba2(arch: Architecture, i: int) -> list[TensorSpec]:
    """Mamba-2 block, llama.cpp LLM_ARCH_MAMBA2 / NEMOTRON_H / GRANITE_HYBRID shapes
    (src/llama-model.cpp: ssm_in {n_embd, 2 d_inner + 2 n_group d_state + n_head}, ...)."""
    h, d_inner = arch.hidden_size, arch.ssm_inner_size or 2 * arch.hidden_size
    n_head, groups = arch.ssm_num_heads or 1, arch.ssm_groups
    conv_dim = d_inner + 2 * groups * (arch.ssm_state_size or 128)
    return [
        TensorSpec("ssm_in", i, h, conv_dim + d_inner + n_head),  # z, x, B, C and dt
        TensorSpec("ssm_conv1d", i, arch.linear_conv_kernel, conv_dim),
        vec("ssm_conv1d.bias", i, conv_dim),
        vec("ssm_dt.bias", i, n_head),
        vec("ssm_a", i, n_head),
        vec("ssm_d", i, n_head),
        TensorSpec("ssm_norm", i, d_inner // groups, groups),
        TensorSpec("ssm_out", i, d_inner, h),
    ]


def _mamba1(arch: Architecture, i: int) -> list[TensorSpec]:
    """Mamba-1 (selective scan) block, llama.cpp LLM_ARCH_MAMBA / JAMBA shapes
    (src/llama-model.cpp: ssm_x {d_inner, dt_rank + 2 d_state}, ssm_a {d_state, d_inner}, ...)."""
    h, d_inner = arch.hidden_size, arch.ssm_inner_size or 2 * arch.hidden_size
    d_state = arch.ssm_state_size or 16
    dt_rank = arch.ssm_dt_rank or -(-h // 16)  # Mamba's "auto": ceil(d_model / 16)
    out = [
        TensorSpec("ssm_in", i, h, 2 * d_inner),
        TensorSpec("ssm_conv1d", i, arch.linear_conv_kernel, d_inner),
        vec("ssm_conv1d.bias", i, d_inner),
        TensorSpec("ssm_x", i, d_inner, dt_rank + 2 * d_state),
        TensorSpec("ssm_dt", i, dt_rank, d_inner),
        vec("ssm_dt.bias", i, d_inner),
        TensorSpec("ssm_a", i, d_state, d_inner),
        vec("ssm_d", i, d_inner),
        TensorSpec("ssm_out", i, d_inner, h),
    ]
    if arch.ssm_dt_norms:  # Jamba: RMSNorm weights on dt, B and C
        out += [vec("ssm_dt_norm", i, dt_rank), vec("ssm_b_norm", i, d_state),
                vec("ssm_c_norm", i, d_state)]
    return out


def _ffn_kind(arch: Architecture, i: int) -> str:
    """"E" mixture of experts, "D" dense, "-" none for layer `i`."""
    if arch.layer_ffns:
        kind = arch.layer_ffns[i]
    else:
        kind = "E" if arch.is_moe and i >= arch.first_dense_layers else "D"
    if kind == "D" and arch.layer_intermediate_sizes and arch.layer_intermediate_sizes[i] == 0:
        return "-"
    return kind


def _ffn(arch: Architecture, i: int) -> list[TensorSpec]:
    kind = _ffn_kind(arch, i)
    if kind == "-":
        return []
    if kind == "C":
        return nd.rwkv_channel_mix(arch, i)
    if kind == "D":
        return dense_ffn(arch, i)
    h, w = arch.hidden_size, arch.expert_width
    n_exp = arch.num_experts or 1
    inter = arch.moe_intermediate_size or arch.intermediate_size or 4 * h
    out = [
        TensorSpec("ffn_gate_inp", i, h, n_exp),
        TensorSpec("ffn_up_exps", i, w, inter, n_exp),
        TensorSpec("ffn_down_exps", i, inter, w, n_exp),
    ]
    if arch.ffn_gated:
        out.insert(1, TensorSpec("ffn_gate_exps", i, w, inter, n_exp))
    if arch.moe_latent_size:  # llama.cpp: ffn_latent_down (hidden -> latent), ffn_latent_up
        out += [TensorSpec("ffn_latent_down", i, h, w), TensorSpec("ffn_latent_up", i, w, h)]
    if arch.num_shared_experts:
        sh = inter * arch.num_shared_experts
        out += [TensorSpec("ffn_up_shexp", i, h, sh), TensorSpec("ffn_down_shexp", i, sh, h)]
        if arch.ffn_gated:
            out.append(TensorSpec("ffn_gate_shexp", i, h, sh))
    return out


def _layer(arch: Architecture, i: int) -> list[TensorSpec]:
    if arch.layer_mixers and arch.layer_mixers[i] == "R":
        return nd.rwkv_layer(arch, i)
    return _transformer_layer(arch, i)


def _transformer_layer(arch: Architecture, i: int) -> list[TensorSpec]:
    """Every tensor of layer `i`: norms, mixer (attention, linear attention, Mamba), FFN.

    A layer with only one of the two sub-blocks (Nemotron-H, NAS no-op attention) has one norm,
    named attn_norm as llama.cpp's nemotron_h does."""
    h = arch.hidden_size
    mixer, ffn = _mixer(arch, i), _ffn(arch, i)
    out = norm(arch, "attn_norm", i, h) if mixer or ffn else []
    out += mixer
    if arch.post_norms:  # Gemma 2/3: post_attention_layernorm
        out += norm(arch, "post_attention_norm", i, h)
    if mixer and ffn:
        out += norm(arch, "ffn_norm", i, h)
    out += ffn
    if arch.post_norms:  # Gemma 2/3: post_feedforward_layernorm
        out += norm(arch, "post_ffw_norm", i, h)
    if arch.per_layer_input_size:  # Gemma 4: the layer's gate on its per-layer embedding
        p = arch.per_layer_input_size
        out += [TensorSpec("per_layer_inp_gate", i, h, p), TensorSpec("per_layer_proj", i, p, h),
                vec("per_layer_post_norm", i, h)]
    return out


def _per_layer_embeddings(arch: Architecture) -> list[TensorSpec]:
    """Gemma 4's per-layer embedding table and its projection from the token embedding
    (llama.cpp src/models/gemma4.cpp: per_layer_token_embd {layers × width, n_vocab},
    per_layer_model_proj {n_embd, layers × width}, per_layer_proj_norm {width})."""
    if not arch.per_layer_input_size:
        return []
    p, n = arch.per_layer_input_size, arch.per_layer_input_size * arch.num_layers
    return [TensorSpec("per_layer_token_embd", None, n, arch.vocab_size),
            TensorSpec("per_layer_model_proj", None, arch.hidden_size, n),
            vec("per_layer_proj_norm", None, p)]


@functools.lru_cache(maxsize=16)  # a report asks for one model's several times in a row
def tensor_inventory(arch: Architecture) -> tuple[TensorSpec, ...]:
    """Every weight tensor of the model, global ones first, then layer by layer."""
    if arch.kind != "decoder" or arch.rwkv_version:
        return nd.inventory(arch)
    h = arch.hidden_size
    out = [TensorSpec("token_embd", None, h, arch.vocab_size), *_per_layer_embeddings(arch)]
    for i in range(arch.num_layers):
        out += _layer(arch, i)
    out += norm(arch, "output_norm", None, h)
    if not arch.tied_embeddings:
        out.append(TensorSpec("output", None, h, arch.vocab_size))
    return tuple(out)


def _expert_share(arch: Architecture, t: TensorSpec) -> float:
    """Fraction of a tensor read per token: active/total for routed expert tensors, else 1."""
    if t.n_experts > 1 and arch.num_experts and arch.num_experts_active:
        return arch.num_experts_active / arch.num_experts
    return 1.0


def parameter_counts(arch: Architecture) -> tuple[int, int]:
    """(total, active) parameters. Active counts what a token reads, as vendors count it:
    routed experts at active/total, the output head, not the token-embedding table (OpenAI's
    gpt-oss model card, https://arxiv.org/abs/2508.10925: 5.13 B active with the unembedding)."""
    inv = tensor_inventory(arch)
    total = sum(t.n_elements for t in inv)
    active = sum(t.n_elements * active_fraction(arch, t) for t in inv)
    if arch.active_count_excludes_head:  # the vendor's own convention (see the hand map)
        head = "token_embd" if arch.tied_embeddings else "output"
        active -= sum(t.n_elements for t in inv if t.name == head)
    return total, round(active)


def active_fraction(arch: Architecture, t: TensorSpec) -> float:
    """Fraction of tensor `t` read per generated token (token_embd reads one row: ~0, as
    does the per-layer embedding table, one row of it per token)."""
    if t.name == "token_embd":
        return 1.0 if arch.tied_embeddings else 0.0
    if t.name in LAZY_TENSORS:
        return 0.0
    return _expert_share(arch, t)
