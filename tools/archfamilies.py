"""HF config.json converters for families whose layers are not all "attention + FFN":
Nemotron-H (Mamba-2 hybrid), Llama Nemotron NAS (DeciLM block_configs), Llama 4 (MoE every
n-th layer). Each returns the Architecture fields beyond the common ones, or None.
"""
from __future__ import annotations

from typing import Any

# Nemotron-H hybrid_override_pattern characters → (mixer, FFN) of `Architecture.layer_mixers`
# / `layer_ffns` (transformers modeling_nemotron_h.py: M = Mamba-2, * = attention, - = MLP,
# E = MoE; every block is one of these with its own norm).
_NEMOTRON_H = {"M": ("M", "-"), "*": ("A", "-"), "-": ("-", "D"), "E": ("-", "E")}
# Llama 4 chunked attention: llama.cpp src/llama-model.cpp (LLM_ARCH_LLAMA4) sets
# n_swa = attention_chunk_size and swa pattern 4: three chunked layers, then one global.
LLAMA4_GLOBAL_EVERY = 4


def nemotron_h_fields(c: dict[str, Any]) -> dict[str, Any]:
    """Layer patterns and Mamba-2 sizes from a nemotron_h config."""
    pattern = str(c["hybrid_override_pattern"])
    heads, head_dim = int(c["mamba_num_heads"]), int(c["mamba_head_dim"])
    out: dict[str, Any] = {
        "layer_mixers": "".join(_NEMOTRON_H[p][0] for p in pattern),
        "layer_ffns": "".join(_NEMOTRON_H[p][1] for p in pattern),
        "ssm_inner_size": heads * head_dim, "ssm_state_size": int(c["ssm_state_size"]),
        "ssm_num_heads": heads, "ssm_groups": int(c.get("n_groups") or 1),
        "linear_conv_kernel": int(c.get("conv_kernel") or 4), "ffn_gated": False,
    }
    if c.get("attention_head_dim"):
        out["head_dim"] = int(c["attention_head_dim"])
    return out


def _deci_width(ffn_mult: float, hidden: int) -> int:
    """DeciLM FFN width: int(2 · ffn_mult · hidden / 3) rounded up to a multiple of 256
    (llama.cpp convert_hf_to_gguf.py DeciModel._ffn_mult_to_intermediate_size)."""
    width = int(2 * ffn_mult * hidden / 3)
    return -(-width // 256) * 256


def nas_fields(c: dict[str, Any]) -> dict[str, Any] | str:
    """Per-layer attention kinds and FFN widths from DeciLM / Nemotron-NAS block_configs."""
    hidden, heads = int(c["hidden_size"]), int(c["num_attention_heads"])
    mixers, widths, groups = [], [], set()
    for b in c["block_configs"]:
        att, ffn = b["attention"], b["ffn"]
        if att.get("no_op"):
            mixers.append("-")
        elif att.get("replace_with_linear"):
            mixers.append("O")
        else:
            mixers.append("A")
            groups.add(int(att["n_heads_in_group"]))
        if ffn.get("replace_with_linear"):
            return "NAS FFN replaced by a linear map"
        widths.append(0 if ffn.get("no_op") else _deci_width(float(ffn["ffn_mult"]), hidden))
    if len(groups) > 1:  # KV heads per layer would differ: not expressible yet
        return f"NAS attention with several KV group sizes {sorted(groups)}"
    n_group = groups.pop() if groups else 1
    return {"layer_mixers": "".join(mixers), "layer_intermediate_sizes": tuple(widths),
            "intermediate_size": max(widths) or None, "num_kv_heads": heads // n_group}


def llama4_fields(c: dict[str, Any], n_layers: int) -> dict[str, Any]:
    """MoE every interleave_moe_layer_step-th layer (transformers Llama4TextConfig.moe_layers:
    range(step - 1, n_layers, step)), one shared expert, dense layers at intermediate_size_mlp."""
    step = int(c.get("interleave_moe_layer_step") or 1)
    ffns = "".join("E" if (i + 1) % step == 0 else "D" for i in range(n_layers))
    out: dict[str, Any] = {
        "layer_ffns": ffns, "num_experts": int(c["num_local_experts"]),
        "num_experts_active": int(c.get("num_experts_per_tok") or 1),
        "moe_intermediate_size": int(c["intermediate_size"]), "num_shared_experts": 1,
        "intermediate_size": int(c.get("intermediate_size_mlp") or c["intermediate_size"]),
        "qk_norm": False,  # Llama 4's q/k L2 norm has no weights (modeling_llama4.py L2Norm)
    }
    if c.get("attention_chunk_size"):
        out["sliding_window"] = int(c["attention_chunk_size"])
        out["sliding_window_layers"] = n_layers - n_layers // LLAMA4_GLOBAL_EVERY
    return out
