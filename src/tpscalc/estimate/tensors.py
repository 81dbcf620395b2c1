"""The tensor inventory of a language model, named as llama.cpp names GGUF tensors.

One `TensorSpec` per tensor (per layer), so that the parameter count and the weight size at
any llama.cpp file type (whose rules depend on the tensor's name and layer) follow from the
architecture. Names follow llama.cpp's `LLM_TENSOR_*` table (src/llama-arch.cpp). Decoder-only
transformers and hybrids are built here; encoders, encoder-decoders and RWKV blocks in
`tensors_nondecoder.py`.
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
    stack: str = ""  # "enc" / "dec" for encoder-decoder blocks (GGUF "enc.blk.N.", "dec.blk.N.")

    @property
    def n_elements(self) -> int:
        """Number of weights in the tensor."""
        return self.n_cols * self.n_rows * self.n_experts

    @property
    def is_vector(self) -> bool:
        """1-D tensors (norms, biases) that llama.cpp keeps at F32."""
        return self.n_rows == 1 and self.n_experts == 1


def _vec(name: str, i: int | None, n: int) -> TensorSpec:
    return TensorSpec(name, i, n, 1)


def _norm(arch: Architecture, name: str, i: int | None, n: int) -> list[TensorSpec]:
    """A norm weight, plus its bias for LayerNorm families."""
    out = [_vec(name, i, n)]
    if arch.norm_bias:
        out.append(_vec(f"{name}.bias", i, n))
    return out


def is_linear_attention_layer(arch: Architecture, i: int) -> bool:
    """True when layer `i` is a linear-attention layer: every k-th layer keeps full attention."""
    if arch.layer_mixers:
        return arch.layer_mixers[i] not in "AP"
    n_lin = arch.linear_attention_layers
    if n_lin <= 0:
        return False
    n_full = arch.num_layers - n_lin
    if n_full <= 0:
        return True
    # Qwen3-Next / Qwen3.5: full_attention_interval = 4 → layers 3, 7, 11, ... are full.
    interval = max(1, round(arch.num_layers / n_full))
    return (i + 1) % interval != 0


def layer_heads(arch: Architecture, i: int) -> tuple[int, int]:
    """(query heads, KV heads) of layer `i`: the per-layer lists when given, else the scalars."""
    n_q = arch.layer_num_heads[i] if arch.layer_num_heads else arch.num_attention_heads
    n_kv = arch.layer_num_kv_heads[i] if arch.layer_num_kv_heads else arch.num_kv_heads
    return n_q, n_kv


def _mixer(arch: Architecture, i: int) -> list[TensorSpec]:
    """The token mixer of layer `i`: attention, a Mamba block, both, a linear map or nothing."""
    kind = arch.layer_mixers[i] if arch.layer_mixers else "A"
    if kind == "M":
        return _mamba2(arch, i)
    if kind == "S":
        return _mamba1(arch, i)
    if kind == "P":  # Falcon-H1: attention and Mamba-2 in parallel on the same input
        return _attention(arch, i, full=True) + _mamba2(arch, i)
    if kind == "O":  # DeciLM / Nemotron NAS "replace_with_linear": only the output projection
        return [TensorSpec("attn_output", i, arch.hidden_size, arch.hidden_size)]
    if kind == "-":
        return []
    if kind == "G":  # gated delta-rule layer in an explicit pattern (Kimi Linear)
        return _gated_delta_net(arch, i)
    if kind == "L":
        from tpscalc.estimate import tensors_nondecoder as nd  # it imports this module

        return nd.lightning_attention(arch, i)
    return _attention(arch, i, full=arch.layer_mixers is not None)


def _mamba2(arch: Architecture, i: int) -> list[TensorSpec]:
    """Mamba-2 block, llama.cpp LLM_ARCH_MAMBA2 / NEMOTRON_H / GRANITE_HYBRID shapes
    (src/llama-model.cpp: ssm_in {n_embd, 2 d_inner + 2 n_group d_state + n_head}, ...)."""
    h, d_inner = arch.hidden_size, arch.ssm_inner_size or 2 * arch.hidden_size
    n_head, groups = arch.ssm_num_heads or 1, arch.ssm_groups
    conv_dim = d_inner + 2 * groups * (arch.ssm_state_size or 128)
    return [
        TensorSpec("ssm_in", i, h, conv_dim + d_inner + n_head),  # z, x, B, C and dt
        TensorSpec("ssm_conv1d", i, arch.linear_conv_kernel, conv_dim),
        _vec("ssm_conv1d.bias", i, conv_dim),
        _vec("ssm_dt.bias", i, n_head),
        _vec("ssm_a", i, n_head),
        _vec("ssm_d", i, n_head),
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
        _vec("ssm_conv1d.bias", i, d_inner),
        TensorSpec("ssm_x", i, d_inner, dt_rank + 2 * d_state),
        TensorSpec("ssm_dt", i, dt_rank, d_inner),
        _vec("ssm_dt.bias", i, d_inner),
        TensorSpec("ssm_a", i, d_state, d_inner),
        _vec("ssm_d", i, d_inner),
        TensorSpec("ssm_out", i, d_inner, h),
    ]
    if arch.ssm_dt_norms:  # Jamba: RMSNorm weights on dt, B and C
        out += [_vec("ssm_dt_norm", i, dt_rank), _vec("ssm_b_norm", i, d_state),
                _vec("ssm_c_norm", i, d_state)]
    return out


def _attention(arch: Architecture, i: int, full: bool = False) -> list[TensorSpec]:
    if arch.is_mla:
        return _mla_attention(arch, i)
    if not full and is_linear_attention_layer(arch, i):
        return _gated_delta_net(arch, i)
    h, d = arch.hidden_size, arch.head_dim
    n_q, n_kv = layer_heads(arch, i)
    q_dim, kv_dim = n_q * d, n_kv * d
    q_rows = 2 * q_dim if arch.attn_output_gate else q_dim
    out = [
        TensorSpec("attn_q", i, h, q_rows),
        TensorSpec("attn_k", i, h, kv_dim),
        TensorSpec("attn_v", i, h, kv_dim),
        TensorSpec("attn_output", i, q_dim, h),
    ]
    if arch.attention_bias or arch.linear_bias:
        out += [_vec(f"{n}.bias", i, dim) for n, dim in
                (("attn_q", q_rows), ("attn_k", kv_dim), ("attn_v", kv_dim))]
    if arch.linear_bias:
        out.append(_vec("attn_output.bias", i, h))
    if arch.qk_norm:
        out += [_vec("attn_q_norm", i, d), _vec("attn_k_norm", i, d)]
    return out


def _gated_delta_net(arch: Architecture, i: int) -> list[TensorSpec]:
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
        _vec("ssm_dt", i, v_heads),
        _vec("ssm_a", i, v_heads),
        _vec("ssm_norm", i, v_head_dim),
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


def _ffn_kind(arch: Architecture, i: int) -> str:
    """"E" mixture of experts, "D" dense, "-" none for layer `i`."""
    if arch.layer_ffns:
        kind = arch.layer_ffns[i]
    else:
        kind = "E" if arch.is_moe and i >= arch.first_dense_layers else "D"
    if kind == "D" and arch.layer_intermediate_sizes and arch.layer_intermediate_sizes[i] == 0:
        return "-"
    return kind


def _dense_ffn(arch: Architecture, i: int) -> list[TensorSpec]:
    h = arch.hidden_size
    inter = arch.intermediate_size or 4 * h
    if arch.layer_intermediate_sizes:
        inter = arch.layer_intermediate_sizes[i]
    out = [TensorSpec("ffn_up", i, h, inter), TensorSpec("ffn_down", i, inter, h)]
    if arch.ffn_gated:
        out.insert(0, TensorSpec("ffn_gate", i, h, inter))
    if arch.linear_bias:
        out += [_vec("ffn_up.bias", i, inter), _vec("ffn_down.bias", i, h)]
        if arch.ffn_gated:
            out.append(_vec("ffn_gate.bias", i, inter))
    return out


def _ffn(arch: Architecture, i: int) -> list[TensorSpec]:
    kind = _ffn_kind(arch, i)
    if kind == "-":
        return []
    if kind == "C":
        from tpscalc.estimate import tensors_nondecoder as nd

        return nd.rwkv_channel_mix(arch, i)
    if kind == "D":
        return _dense_ffn(arch, i)
    h = arch.hidden_size
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


def _layer(arch: Architecture, i: int) -> list[TensorSpec]:
    if arch.layer_mixers and arch.layer_mixers[i] == "R":
        from tpscalc.estimate import tensors_nondecoder as nd

        return nd.rwkv_layer(arch, i)
    return _transformer_layer(arch, i)


def _transformer_layer(arch: Architecture, i: int) -> list[TensorSpec]:
    """Every tensor of layer `i`: norms, mixer (attention, linear attention, Mamba), FFN.

    A layer with only one of the two sub-blocks (Nemotron-H, NAS no-op attention) has one norm,
    named attn_norm as llama.cpp's nemotron_h does."""
    h = arch.hidden_size
    mixer, ffn = _mixer(arch, i), _ffn(arch, i)
    out = _norm(arch, "attn_norm", i, h) if mixer or ffn else []
    out += mixer
    if arch.post_norms:  # Gemma 2/3: post_attention_layernorm
        out += _norm(arch, "post_attention_norm", i, h)
    if mixer and ffn:
        out += _norm(arch, "ffn_norm", i, h)
    out += ffn
    if arch.post_norms:  # Gemma 2/3: post_feedforward_layernorm
        out += _norm(arch, "post_ffw_norm", i, h)
    return out


def tensor_inventory(arch: Architecture) -> tuple[TensorSpec, ...]:
    """Every weight tensor of the model, global ones first, then layer by layer."""
    if arch.kind != "decoder" or arch.rwkv_version:
        from tpscalc.estimate import tensors_nondecoder as nd

        return nd.inventory(arch)
    h = arch.hidden_size
    out = [TensorSpec("token_embd", None, h, arch.vocab_size)]
    for i in range(arch.num_layers):
        out += _layer(arch, i)
    out += _norm(arch, "output_norm", None, h)
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
    return total, round(active)


def active_fraction(arch: Architecture, t: TensorSpec) -> float:
    """Fraction of tensor `t` read per generated token (token_embd reads one row: ~0)."""
    if t.name == "token_embd":
        return 1.0 if arch.tied_embeddings else 0.0
    return _expert_share(arch, t)
