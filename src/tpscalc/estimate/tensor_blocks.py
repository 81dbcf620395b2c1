"""Building blocks of the tensor inventories: one weight tensor, norms, attention, dense FFNs.

Shared by the decoder inventory (`tensors.py`) and the encoder, encoder-decoder and RWKV
inventories (`tensors_nondecoder.py`). Names follow llama.cpp's `LLM_TENSOR_*` table
(src/llama-arch.cpp).
"""
from __future__ import annotations

from dataclasses import dataclass

from tpscalc.catalog.frozen import FrozenValue
from tpscalc.catalog.schema import Architecture
from tpscalc.estimate.layers import (
    full_attention_positions,
    is_linear_attention_layer,
    layer_heads,
)


@dataclass(frozen=True, eq=False, repr=False)  # eq, hash, repr: FrozenValue
class TensorSpec(FrozenValue):
    """One weight tensor: GGUF base name, layer and shape.

    The layer is None for a global tensor; the shape is (n_cols, n_rows × n_experts).
    """

    name: str  # "token_embd", "attn_q", "ffn_down_exps", "attn_norm", ...
    layer: int | None
    n_cols: int  # ne[0], the row length that quantization blocks run along
    n_rows: int  # ne[1]
    n_experts: int = 1  # ne[2] for stacked expert tensors
    stack: str = ""  # "enc" / "dec" for encoder-decoder blocks (GGUF "enc.blk.N.", "dec.blk.N.")

    @property
    def n_elements(self) -> int:
        """Number of weights in the tensor."""
        return self.n_cols * self.n_rows * self.n_experts

    @property
    def is_vector(self) -> bool:
        """1-D tensors (norms, biases) that llama.cpp keeps at F32."""
        return self.n_rows == 1 and self.n_experts == 1


def vec(name: str, i: int | None, n: int) -> TensorSpec:
    return TensorSpec(name, i, n, 1)


def norm(arch: Architecture, name: str, i: int | None, n: int) -> list[TensorSpec]:
    """A norm weight, plus its bias for LayerNorm families."""
    out = [vec(name, i, n)]
    if arch.norm_bias:
        out.append(vec(f"{name}.bias", i, n))
    return out


def attention(arch: Architecture, i: int, full: bool = False) -> list[TensorSpec]:
    if arch.is_mla:
        return _mla_attention(arch, i)
    if not full and is_linear_attention_layer(arch, i):
        return gated_delta_net(arch, i)
    h, d = arch.hidden_size, arch.head_dim
    n_q, n_kv = layer_heads(arch, i)
    k_eq_v = False
    if _has_global_shape(arch) and i in full_attention_positions(arch):
        # Gemma 4's global layers: their own head size and KV heads, V from K's projection
        d, n_kv = arch.global_head_dim or d, arch.global_num_kv_heads or n_kv
        k_eq_v = arch.global_k_eq_v
    q_dim, kv_dim = n_q * d, n_kv * d
    q_rows = 2 * q_dim if arch.attn_output_gate else q_dim
    # A KV-shared layer reads an earlier layer's cache: no K or V projection of its own
    # (Gemma 4: llama.cpp's gemma4 loader makes them optional where !has_kv(i), and the
    # checkpoints have none; Gemma 3n's keep unused ones, a model not built here)
    own_kv = not arch.kv_shared_layers or i < arch.num_layers - arch.kv_shared_layers
    out = [
        TensorSpec("attn_q", i, h, q_rows),
        *([TensorSpec("attn_k", i, h, kv_dim)] if own_kv else []),
        *([] if k_eq_v or not own_kv else [TensorSpec("attn_v", i, h, kv_dim)]),
        TensorSpec("attn_output", i, q_dim, h),
    ]
    if arch.attention_bias or arch.linear_bias:
        out += [vec(f"{n}.bias", i, dim) for n, dim in
                (("attn_q", q_rows), ("attn_k", kv_dim), ("attn_v", kv_dim))]
    if arch.linear_bias:
        out.append(vec("attn_output.bias", i, h))
    if arch.qk_norm:
        out += [vec("attn_q_norm", i, d), *([vec("attn_k_norm", i, d)] if own_kv else [])]
    return out


def _has_global_shape(arch: Architecture) -> bool:
    """True when the full-attention layers have their own head shape (Gemma 4)."""
    return bool(arch.global_head_dim or arch.global_num_kv_heads or arch.global_k_eq_v)


def gated_delta_net(arch: Architecture, i: int) -> list[TensorSpec]:
    """Gated DeltaNet block (llama.cpp's qwen3next `ssm_*` tensors; HF linear_* config fields)."""
    h = arch.hidden_size
    k_heads = arch.linear_num_key_heads or arch.num_kv_heads
    v_heads = arch.linear_num_value_heads or arch.num_attention_heads
    key_dim = k_heads * (arch.linear_key_head_dim or arch.head_dim)
    v_head_dim = arch.linear_value_head_dim or arch.head_dim
    value_dim = v_heads * v_head_dim
    conv_dim = 2 * key_dim + value_dim
    return [
        TensorSpec("ssm_in", i, h, 2 * key_dim + 2 * value_dim),  # q, k, v and the z gate
        TensorSpec("ssm_ba", i, h, 2 * v_heads),  # beta and alpha per value head
        TensorSpec("ssm_conv1d", i, arch.linear_conv_kernel, conv_dim),
        vec("ssm_dt", i, v_heads),
        vec("ssm_a", i, v_heads),
        vec("ssm_norm", i, v_head_dim),
        TensorSpec("ssm_out", i, value_dim, h),
    ]


def _mla_attention(arch: Architecture, i: int) -> list[TensorSpec]:
    """DeepSeek-style multi-head latent attention (llama.cpp's deepseek2 tensors)."""
    h, heads = arch.hidden_size, arch.num_attention_heads
    rope = arch.qk_rope_head_dim or 64
    nope = arch.qk_nope_head_dim or (arch.head_dim - rope)
    v_dim = arch.v_head_dim or nope
    kv_rank = arch.kv_lora_rank or 512
    out: list[TensorSpec] = []
    if arch.q_lora_rank:
        out += [TensorSpec("attn_q_a", i, h, arch.q_lora_rank),
                TensorSpec("attn_q_a_norm", i, arch.q_lora_rank, 1),
                TensorSpec("attn_q_b", i, arch.q_lora_rank, heads * (nope + rope))]
    else:
        out.append(TensorSpec("attn_q", i, h, heads * (nope + rope)))
    out += [TensorSpec("attn_kv_a_mqa", i, h, kv_rank + rope),
            TensorSpec("attn_kv_a_norm", i, kv_rank, 1),
            TensorSpec("attn_kv_b", i, kv_rank, heads * (nope + v_dim)),
            TensorSpec("attn_output", i, heads * v_dim, h)]
    return out


def dense_ffn(arch: Architecture, i: int) -> list[TensorSpec]:
    h = arch.hidden_size
    inter = arch.intermediate_size or 4 * h
    if arch.layer_intermediate_sizes:
        inter = arch.layer_intermediate_sizes[i]
    out = [TensorSpec("ffn_up", i, h, inter), TensorSpec("ffn_down", i, inter, h)]
    if arch.ffn_gated:
        out.insert(0, TensorSpec("ffn_gate", i, h, inter))
    if arch.linear_bias:
        out += [vec("ffn_up.bias", i, inter), vec("ffn_down.bias", i, h)]
        if arch.ffn_gated:
            out.append(vec("ffn_gate.bias", i, inter))
    return out
