"""Tensor inventories beyond the decoder-only transformer: encoders, encoder-decoders, RWKV.

Names and shapes follow llama.cpp's GGUF tensors (src/llama-arch.cpp, src/models/*.cpp):
BERT / XLM-RoBERTa (LLM_ARCH_BERT: post-norm, learned positions, token types), ModernBERT
(LLM_ARCH_MODERN_BERT: pre-norm, fused attn_qkv, GeGLU ffn_up of 2 × n_ff rows), T5
(LLM_ARCH_T5: "enc.blk.N." and "dec.blk.N." blocks, attn_o, cross_attn_*, attn_rel_b) and
RWKV-6 (LLM_ARCH_RWKV6: time_mix_* and channel_mix_*). RWKV-4 and RWKV-5, which llama.cpp
does not run, use the RWKV-6 names for the tensors they share with it.
"""
from __future__ import annotations

from tpscalc.catalog.schema import Architecture
from tpscalc.estimate.tensor_blocks import TensorSpec, attention, dense_ffn, norm, vec


def _with_stack(ts: list[TensorSpec], stack: str, layer: int | None) -> list[TensorSpec]:
    return [TensorSpec(t.name, layer, t.n_cols, t.n_rows, t.n_experts, stack) for t in ts]


def _renamed(ts: list[TensorSpec], names: dict[str, str], prefix: str = "") -> list[TensorSpec]:
    out = []
    for t in ts:
        base, dot, suffix = t.name.partition(".")
        name = prefix + names.get(base, base) + dot + suffix
        out.append(TensorSpec(name, t.layer, t.n_cols, t.n_rows, t.n_experts, t.stack))
    return out


def _bert_attention(arch: Architecture, i: int) -> list[TensorSpec]:
    """Self-attention of an encoder layer: q, k, v (or one fused qkv) and the output."""
    if not arch.fused_qkv:
        return attention(arch, i, full=True)
    h, d = arch.hidden_size, arch.head_dim
    qkv = (arch.num_attention_heads + 2 * arch.num_kv_heads) * d
    return [TensorSpec("attn_qkv", i, h, qkv),
            TensorSpec("attn_output", i, arch.num_attention_heads * d, h)]


def _encoder_ffn(arch: Architecture, i: int) -> list[TensorSpec]:
    """Encoder FFN; a gated one is llama.cpp's modern-bert fused ffn_up {n_embd, 2 n_ff}."""
    if not arch.ffn_gated:
        return dense_ffn(arch, i)
    h, inter = arch.hidden_size, arch.intermediate_size or 4 * arch.hidden_size
    return [TensorSpec("ffn_up", i, h, 2 * inter), TensorSpec("ffn_down", i, inter, h)]


def _encoder_layer(arch: Architecture, i: int) -> list[TensorSpec]:
    """One encoder block: BERT's post-norm (attn_output_norm, layer_output_norm) or
    ModernBERT's pre-norm (attn_norm, absent in layer 0 where the embedding norm serves)."""
    h = arch.hidden_size
    attn, ffn = _bert_attention(arch, i), _encoder_ffn(arch, i)
    if arch.norm_position == "post":
        return (attn + norm(arch, "attn_output_norm", i, h) + ffn
                + norm(arch, "layer_output_norm", i, h))
    first = [] if i == 0 else norm(arch, "attn_norm", i, h)
    return first + attn + norm(arch, "ffn_norm", i, h) + ffn


def _encoder_inventory(arch: Architecture) -> list[TensorSpec]:
    h = arch.hidden_size
    out = [TensorSpec("token_embd", None, h, arch.vocab_size)]
    if arch.token_type_embeddings:
        out.append(TensorSpec("token_types", None, h, arch.token_type_embeddings))
    if arch.position_embeddings:
        out.append(TensorSpec("position_embd", None, h, arch.position_embeddings))
    out += norm(arch, "token_embd_norm", None, h)
    for i in range(arch.num_layers):
        out += _encoder_layer(arch, i)
    if arch.norm_position == "pre":
        out += norm(arch, "output_norm", None, h)
    return out


_T5_NAMES = {"attn_output": "attn_o"}


def _t5_block(arch: Architecture, j: int, stack: str, layer: int) -> list[TensorSpec]:
    """Block j of the encoder or decoder stack; `layer` is the running index llama-quantize
    counts (decoder blocks first: "dec.blk" sorts before "enc.blk")."""
    h = arch.hidden_size
    attn = _renamed(attention(arch, layer, full=True), _T5_NAMES)
    out = norm(arch, "attn_norm", layer, h) + attn
    if j == 0 and arch.relative_attention_buckets:  # T5: position bias in the first block only
        out.append(TensorSpec("attn_rel_b", layer, arch.num_attention_heads,
                              arch.relative_attention_buckets))
    if stack == "dec":
        out += _renamed(norm(arch, "attn_norm", layer, h), {}, "cross_")
        out += _renamed(attn, {}, "cross_")
    out += norm(arch, "ffn_norm", layer, h) + dense_ffn(arch, layer)
    return _with_stack(out, stack, layer)


def _encoder_decoder_inventory(arch: Architecture) -> list[TensorSpec]:
    h, n_dec = arch.hidden_size, arch.num_layers
    out = [TensorSpec("token_embd", None, h, arch.vocab_size)]
    for j in range(n_dec):
        out += _t5_block(arch, j, "dec", j)
    for j in range(arch.encoder_layers):
        out += _t5_block(arch, j, "enc", n_dec + j)
    out += _with_stack(norm(arch, "output_norm", None, h), "dec", None)
    out += _with_stack(norm(arch, "output_norm", None, h), "enc", None)
    if not arch.tied_embeddings:
        out.append(TensorSpec("output", None, h, arch.vocab_size))
    return out


def _layer_norm(name: str, i: int | None, n: int) -> list[TensorSpec]:
    """RWKV's LayerNorms always carry a bias."""
    return [vec(name, i, n), vec(f"{name}.bias", i, n)]


def rwkv_time_mix(arch: Architecture, i: int) -> list[TensorSpec]:
    """RWKV time mixing (the attention replacement) of layer `i`, by version."""
    h, v = arch.hidden_size, arch.rwkv_version or 6
    head = arch.rwkv_head_size or 64
    proj = ["time_mix_key", "time_mix_value", "time_mix_receptance"]
    if v >= 5:
        proj.append("time_mix_gate")
    out = [TensorSpec(n, i, h, h) for n in proj]
    if v == 6:
        mix, decay = arch.rwkv_time_mix_extra_dim or 32, arch.rwkv_time_decay_extra_dim or 64
        out += [TensorSpec("time_mix_w1", i, h, 5 * mix),
                TensorSpec("time_mix_w2", i, mix, h, 5),
                vec("time_mix_lerp_x", i, h),
                TensorSpec("time_mix_lerp_fused", i, h, 1, 5),
                TensorSpec("time_mix_decay_w1", i, h, decay),
                TensorSpec("time_mix_decay_w2", i, decay, h)]
    else:  # one static token-shift mix per projection
        lerps = ("time_mix_lerp_k", "time_mix_lerp_v", "time_mix_lerp_r", "time_mix_lerp_g")
        out += [vec(n, i, h) for n in lerps[: len(proj)]]
    out.append(vec("time_mix_decay", i, h))
    out.append(TensorSpec("time_mix_first", i, head, h // head) if v >= 5
               else vec("time_mix_first", i, h))
    if v >= 5:  # GroupNorm over the heads' outputs (ln_x)
        out += _layer_norm("time_mix_ln", i, h)
    out.append(TensorSpec("time_mix_output", i, h, h))
    return out


def rwkv_channel_mix(arch: Architecture, i: int) -> list[TensorSpec]:
    """RWKV channel mixing (the FFN replacement): key, value, receptance and two shift mixes."""
    h = arch.hidden_size
    ffn = arch.intermediate_size or 4 * h
    return [vec("channel_mix_lerp_k", i, h), vec("channel_mix_lerp_r", i, h),
            TensorSpec("channel_mix_key", i, h, ffn),
            TensorSpec("channel_mix_value", i, ffn, h),
            TensorSpec("channel_mix_receptance", i, h, h)]


def rwkv_layer(arch: Architecture, i: int) -> list[TensorSpec]:
    """One RWKV block: LayerNorm, time mix, LayerNorm (attn_norm_2), channel mix."""
    h = arch.hidden_size
    return (_layer_norm("attn_norm", i, h) + rwkv_time_mix(arch, i)
            + _layer_norm("attn_norm_2", i, h) + rwkv_channel_mix(arch, i))


def _rwkv_inventory(arch: Architecture) -> list[TensorSpec]:
    h = arch.hidden_size
    out = [TensorSpec("token_embd", None, h, arch.vocab_size)]
    out += _layer_norm("token_embd_norm", None, h)  # ln0 of block 0
    for i in range(arch.num_layers):
        out += rwkv_layer(arch, i)
    out += _layer_norm("output_norm", None, h)
    if not arch.tied_embeddings:
        out.append(TensorSpec("output", None, h, arch.vocab_size))
    return out


def lightning_attention(arch: Architecture, i: int) -> list[TensorSpec]:
    """MiniMax-Text-01 lightning (linear) attention: fused qkv, an output gate, a norm over
    the heads and the output projection (modeling_minimax_text_01.py; not in llama.cpp)."""
    h, inner = arch.hidden_size, arch.num_attention_heads * arch.head_dim
    return [TensorSpec("attn_qkv", i, h, 3 * inner), TensorSpec("attn_gate", i, h, inner),
            vec("attn_sub_norm", i, inner), TensorSpec("attn_output", i, inner, h)]


def inventory(arch: Architecture) -> tuple[TensorSpec, ...]:
    """Every weight tensor of an encoder, encoder-decoder or RWKV model."""
    if arch.kind == "encoder":
        return tuple(_encoder_inventory(arch))
    if arch.kind == "encoder-decoder":
        return tuple(_encoder_decoder_inventory(arch))
    return tuple(_rwkv_inventory(arch))
