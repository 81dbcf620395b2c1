"""The 2026 layouts of a GGUF header: the metadata keys beyond one attention shape per layer.

Each function takes the file's `{arch}.` key getter, its layer count, the per-layer KV-head
counts (None when one value) and the tensor names, and gives the Architecture fields that
replace or add to the plain attention + FFN reading (gguf_model.architecture), or a reason
why the file cannot be read so. Keys as llama.cpp's converter writes them
(convert_hf_to_gguf.py: Gemma4Model, Qwen3NextModel / Qwen3_5Model, NemotronHModel) and its
loader reads them (src/llama-model.cpp, load_hparams); tensor names as src/llama-arch.cpp gives
them (blk.N.attn_q, blk.N.ssm_in, blk.N.ffn_up_exps).
"""
from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

Getter = Callable[[str], Any]
Layout = dict[str, Any] | str  # the fields, or why the file cannot be read


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _ints(value: Any, n_layers: int) -> tuple[int, ...] | None:
    """A per-layer array of ints (n_layers long) or a scalar repeated; None when absent."""
    if isinstance(value, tuple) and len(value) == n_layers:
        return tuple(int(v) for v in value)
    one = _int(value)
    return (one,) * n_layers if one is not None else None


def gemma4(g: Getter, n_layers: int, layer_kv: tuple[int, ...] | None,
           tensors: Collection[str]) -> Layout:
    """Gemma 4: sliding layers of `key_length_swa`-wide heads and global ones of `key_length`
    (and, where `head_count_kv` is an array, their own KV-head counts), K = V on the global
    layers (no attn_v tensor there), the last `shared_kv_layers` reusing earlier caches,
    per-layer embeddings (`embedding_length_per_layer_input`) and the double-wide FFN of the
    shared layers (a per-layer `feed_forward_length`)."""
    pattern = g("attention.sliding_window_pattern")
    if not (isinstance(pattern, tuple) and len(pattern) == n_layers):
        return "gemma4 metadata lacks its per-layer sliding_window_pattern"
    sliding = [i for i, swa in enumerate(pattern) if swa]
    full = [i for i, swa in enumerate(pattern) if not swa]
    d_full = _int(g("attention.key_length"))
    d_swa = _int(g("attention.key_length_swa")) or d_full
    out: dict[str, Any] = {"qk_norm": True, "post_norms": True, "layer_num_kv_heads": None}
    if d_swa:
        out["head_dim"] = d_swa
        if d_full and d_full != d_swa:
            out["global_head_dim"] = d_full
    if layer_kv and sliding and full:
        out["num_kv_heads"] = layer_kv[sliding[0]]
        if layer_kv[full[0]] != layer_kv[sliding[0]]:
            out["global_num_kv_heads"] = layer_kv[full[0]]
    shared = _int(g("attention.shared_kv_layers")) or 0
    if 0 < shared < n_layers:
        out["kv_shared_layers"] = shared
    own_full = [i for i in full if i < n_layers - shared]
    if tensors and own_full and f"blk.{own_full[0]}.attn_v.weight" not in tensors:
        out["global_k_eq_v"] = True
    if _int(g("embedding_length_per_layer_input")):
        out["per_layer_input_size"] = _int(g("embedding_length_per_layer_input"))
    ffn = _ints(g("feed_forward_length"), n_layers)
    if ffn and len(set(ffn)) > 1:
        out["intermediate_size"] = ffn[0]
        out["layer_intermediate_sizes"] = ffn
    return out


def gated_deltanet(g: Getter, n_layers: int, layer_kv: tuple[int, ...] | None,
                   tensors: Collection[str]) -> Layout:
    """Qwen3-Next and Qwen3.5 / 3.6: Gated DeltaNet layers with full attention on every
    `full_attention_interval`-th layer (llama.cpp's default 4); the DeltaNet heads from the
    `ssm.*` keys (group_count: key heads, state_size: key head width, time_step_rank: value
    heads, inner_size: all value heads' width, conv_kernel); the attention's q projection
    carries an output gate."""
    interval = _int(g("full_attention_interval")) or 4
    k_heads, k_dim = _int(g("ssm.group_count")), _int(g("ssm.state_size"))
    v_heads, inner = _int(g("ssm.time_step_rank")), _int(g("ssm.inner_size"))
    if not (k_heads and k_dim and v_heads and inner) or inner % v_heads or interval < 1:
        return "its Gated DeltaNet metadata (ssm.* keys) is incomplete"
    out: dict[str, Any] = {
        "linear_attention_layers": n_layers - n_layers // interval,
        "linear_num_key_heads": k_heads, "linear_key_head_dim": k_dim,
        "linear_num_value_heads": v_heads, "linear_value_head_dim": inner // v_heads,
        "linear_conv_kernel": _int(g("ssm.conv_kernel")) or 4,
        "attn_output_gate": True, "qk_norm": True, "layer_num_kv_heads": None,
    }
    if layer_kv:
        out["num_kv_heads"] = max(layer_kv)
    if _int(g("expert_shared_feed_forward_length")):
        out["num_shared_experts"] = 1
    return out


def _mamba2_stack(g: Getter, mixers: str, ffns: str,
                  layer_kv: tuple[int, ...] | None) -> dict[str, Any] | None:
    """The fields of a Nemotron-H stack of `mixers` and `ffns` (Architecture.layer_mixers,
    layer_ffns), its Mamba-2 mixer from the `ssm.*` keys (inner_size, state_size, group_count,
    time_step_rank: its heads, conv_kernel); None where those keys are missing."""
    inner, state = _int(g("ssm.inner_size")), _int(g("ssm.state_size"))
    heads = _int(g("ssm.time_step_rank"))
    if not (inner and state and heads):
        return None
    out: dict[str, Any] = {
        "layer_mixers": mixers, "layer_ffns": ffns,
        "linear_attention_layers": len(mixers) - mixers.count("A"),
        "layer_num_kv_heads": None, "layer_num_heads": None, "ssm_inner_size": inner,
        "ssm_state_size": state, "ssm_num_heads": heads,
        "ssm_groups": _int(g("ssm.group_count")) or 1,
        "linear_conv_kernel": _int(g("ssm.conv_kernel")) or 4,
    }
    if layer_kv:  # the attention layers' count (0 on the others)
        out["num_kv_heads"] = max(layer_kv)
    return out


def nemotron_h(g: Getter, n_layers: int, layer_kv: tuple[int, ...] | None,
               tensors: Collection[str]) -> Layout:
    """Nemotron-H: each layer is attention (its `head_count_kv` entry > 0), an MLP (its
    `feed_forward_length` entry > 0) or Mamba-2 (both 0) (_mamba2_stack)."""
    ffn = _ints(g("feed_forward_length"), n_layers)
    mixers = "".join("A" if kv else ("-" if ff else "M")
                     for kv, ff in zip(layer_kv or (), ffn or ()))
    stack = _mamba2_stack(g, mixers, "".join("D" if ff else "-" for ff in ffn or ()), layer_kv)
    if not (layer_kv and ffn and stack):
        return "its Nemotron-H metadata (per-layer head_count_kv and feed_forward_length, " \
               "ssm.* keys) is incomplete"
    return {**stack, "intermediate_size": max(ffn)}


def nemotron_h_moe(g: Getter, n_layers: int, layer_kv: tuple[int, ...] | None,
                   tensors: Collection[str]) -> Layout:
    """Nemotron 3 (Nemotron-H with MoE layers): each layer's role from its tensors, as llama.cpp
    names them: attention (attn_q), Mamba-2 (ssm_in), routed experts (ffn_up_exps) or a dense
    MLP (ffn_up) (_mamba2_stack)."""
    def has(i: int, name: str) -> bool:
        return f"blk.{i}.{name}.weight" in tensors

    mixers = "".join("A" if has(i, "attn_q") else "M" if has(i, "ssm_in") else "-"
                     for i in range(n_layers))
    ffns = "".join("E" if has(i, "ffn_up_exps") else "D" if has(i, "ffn_up") else "-"
                   for i in range(n_layers))
    stack = _mamba2_stack(g, mixers, ffns, layer_kv)
    if "A" not in mixers or stack is None:
        return "its Nemotron-H layers (attn_q / ssm_in tensors) or ssm.* keys are missing"
    return stack


# GGUF architecture -> its layout reader
LAYOUTS: dict[str, Callable[[Getter, int, tuple[int, ...] | None, Collection[str]], Layout]] = {
    "gemma4": gemma4, "qwen3next": gated_deltanet, "qwen35": gated_deltanet,
    "qwen35moe": gated_deltanet, "nemotron_h": nemotron_h, "nemotron_h_moe": nemotron_h_moe,
}
