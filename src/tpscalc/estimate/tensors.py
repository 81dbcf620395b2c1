"""The tensor inventory of a decoder-only transformer, named as llama.cpp names GGUF tensors.

One `TensorSpec` per tensor (per layer), so that the parameter count and the weight size at
any llama.cpp file type (whose rules depend on the tensor's name and layer) follow from the
architecture. Names follow llama.cpp's `LLM_TENSOR_*` table (src/llama-arch.cpp).
"""
from __future__ import annotations

from dataclasses import dataclass

from tpscalc.catalog.schema import Architecture


@dataclass(frozen=True)
class TensorSpec:
    """One weight tensor: GGUF base name, layer (None for global), shape as (n_cols, n_rows × n_experts)."""

    name: str  # "token_embd", "attn_q", "ffn_down_exps", "attn_norm", ...
    layer: int | None
    n_cols: int  # ne[0], the row length that quantization blocks run along
    n_rows: int  # ne[1]
    n_experts: int = 1  # ne[2] for stacked expert tensors

    @property
    def n_elements(self) -> int:
        """Number of weights in the tensor."""
        return self.n_cols * self.n_rows * self.n_experts

    @property
    def is_vector(self) -> bool:
        """1-D tensors (norms, biases) that llama.cpp keeps at F32."""
        return self.n_rows == 1 and self.n_experts == 1


def _attention(arch: Architecture, i: int) -> list[TensorSpec]:
    h, d = arch.hidden_size, arch.head_dim
    q_dim, kv_dim = arch.num_attention_heads * d, arch.num_kv_heads * d
    if arch.is_mla:
        return _mla_attention(arch, i)
    out = [
        TensorSpec("attn_q", i, h, q_dim),
        TensorSpec("attn_k", i, h, kv_dim),
        TensorSpec("attn_v", i, h, kv_dim),
        TensorSpec("attn_output", i, q_dim, h),
    ]
    if arch.attention_bias:
        out += [TensorSpec(f"{n}.bias", i, dim, 1) for n, dim in
                (("attn_q", q_dim), ("attn_k", kv_dim), ("attn_v", kv_dim))]
    return out


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


def _is_moe_layer(arch: Architecture, i: int) -> bool:
    return arch.is_moe and i >= arch.first_dense_layers


def _ffn(arch: Architecture, i: int) -> list[TensorSpec]:
    h = arch.hidden_size
    if not _is_moe_layer(arch, i):
        inter = arch.intermediate_size or 4 * h
        out = [TensorSpec("ffn_up", i, h, inter), TensorSpec("ffn_down", i, inter, h)]
        if arch.ffn_gated:
            out.insert(0, TensorSpec("ffn_gate", i, h, inter))
        return out
    n_exp = arch.num_experts or 1
    inter = arch.moe_intermediate_size or arch.intermediate_size or 4 * h
    out = [
        TensorSpec("ffn_gate_inp", i, h, n_exp),
        TensorSpec("ffn_up_exps", i, h, inter, n_exp),
        TensorSpec("ffn_down_exps", i, inter, h, n_exp),
    ]
    if arch.ffn_gated:
        out.insert(1, TensorSpec("ffn_gate_exps", i, h, inter, n_exp))
    if arch.num_shared_experts:
        sh = inter * arch.num_shared_experts
        out += [TensorSpec("ffn_up_shexp", i, h, sh), TensorSpec("ffn_down_shexp", i, sh, h)]
        if arch.ffn_gated:
            out.append(TensorSpec("ffn_gate_shexp", i, h, sh))
    return out


def tensor_inventory(arch: Architecture) -> tuple[TensorSpec, ...]:
    """Every weight tensor of the model, global ones first, then layer by layer."""
    h = arch.hidden_size
    out = [TensorSpec("token_embd", None, h, arch.vocab_size)]
    for i in range(arch.num_layers):
        out.append(TensorSpec("attn_norm", i, h, 1))
        out += _attention(arch, i)
        out.append(TensorSpec("ffn_norm", i, h, 1))
        out += _ffn(arch, i)
    out.append(TensorSpec("output_norm", None, h, 1))
    if not arch.tied_embeddings:
        out.append(TensorSpec("output", None, h, arch.vocab_size))
    return tuple(out)


def _expert_share(arch: Architecture, t: TensorSpec) -> float:
    """Fraction of a tensor read per token: active/total for routed expert tensors, else 1."""
    if t.n_experts > 1 and arch.num_experts and arch.num_experts_active:
        return arch.num_experts_active / arch.num_experts
    return 1.0


def parameter_counts(arch: Architecture) -> tuple[int, int]:
    """(total, active) parameters; active counts routed experts at active/total (as model cards do)."""
    inv = tensor_inventory(arch)
    total = sum(t.n_elements for t in inv)
    active = sum(t.n_elements * _expert_share(arch, t) for t in inv)
    return total, int(round(active))


def active_fraction(arch: Architecture, t: TensorSpec) -> float:
    """Fraction of tensor `t` read per generated token (token_embd reads one row: ~0)."""
    if t.name == "token_embd":
        return 1.0 if arch.tied_embeddings else 0.0
    return _expert_share(arch, t)
