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


# Newer nemotron_h configs (transformers 5, e.g. NVIDIA-Nemotron-3.5-Lightning-30B-A3B) name
# each block in `layers_block_type` instead of the pattern string: the same four kinds.
_BLOCK_TYPES = {"mamba": "M", "attention": "*", "mlp": "-", "moe": "E"}


def nemotron_h_pattern(c: dict[str, Any]) -> str | None:
    """The hybrid_override_pattern of a nemotron_h config, from `layers_block_type` if need be."""
    if c.get("hybrid_override_pattern"):
        return str(c["hybrid_override_pattern"])
    types = c.get("layers_block_type")
    if isinstance(types, str):  # kept as a Python list's text in some copies
        types = [t.strip(" '\"") for t in types.strip("[]").split(",")]
    if not types or any(t not in _BLOCK_TYPES for t in types):
        return None
    return "".join(_BLOCK_TYPES[t] for t in types)


def nemotron_h_fields(c: dict[str, Any]) -> dict[str, Any]:
    """Layer patterns and Mamba-2 sizes from a nemotron_h config."""
    pattern = nemotron_h_pattern(c) or ""
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


def _make_divisible(v: float, divisor: int) -> int:
    """OpenELM's rounding to a multiple of `divisor`, never more than 10 % down
    (make_divisible in configuration_openelm.py, https://huggingface.co/apple/OpenELM-270M)."""
    new_v = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new_v + divisor if new_v < 0.9 * v else new_v


def _linspace2(lo: float, hi: float, n: int) -> list[float]:
    """numpy.linspace(lo, hi, n) rounded to 2 decimals, as OpenELMConfig.__post_init__ does."""
    return [round(lo + (hi - lo) * k / (n - 1), 2) if n > 1 else lo for k in range(n)]


def openelm_fields(c: dict[str, Any]) -> dict[str, Any]:
    """Layer-wise scaled heads and FFN widths of an OpenELM config (configuration_openelm.py:
    qkv and ffn multipliers spread linearly over the layers, query dim rounded to head_dim ×
    num_gqa_groups, FFN width to ffn_dim_divisor; modeling_openelm.py: GLU FFN, q/k norms)."""
    n, dim, hd = int(c["num_transformer_layers"]), int(c["model_dim"]), int(c["head_dim"])
    groups = int(c.get("num_gqa_groups") or 1)
    qkv = c.get("qkv_multipliers", 1.0)
    qkv_m = _linspace2(*qkv, n) if isinstance(qkv, (list, tuple)) and len(qkv) == 2 else [qkv] * n
    ffn = c.get("ffn_multipliers", 4.0)
    ffn_m = (list(ffn) if isinstance(ffn, (list, tuple)) and len(ffn) == n
             else _linspace2(*ffn, n) if isinstance(ffn, (list, tuple)) else [ffn] * n)
    heads = [_make_divisible(dim * float(m), hd * groups) // hd for m in qkv_m]
    divisor = int(c.get("ffn_dim_divisor") or 256)
    return {
        "num_layers": n, "hidden_size": dim, "head_dim": hd,
        "num_attention_heads": max(heads), "num_kv_heads": max(heads) // groups,
        "layer_num_heads": tuple(heads), "layer_num_kv_heads": tuple(q // groups for q in heads),
        "layer_intermediate_sizes": tuple(_make_divisible(dim * float(m), divisor) for m in ffn_m),
        "intermediate_size": max(_make_divisible(dim * float(m), divisor) for m in ffn_m),
        "vocab_size": int(c.get("vocab_size") or 32000),
        "qk_norm": bool(c.get("normalize_qk_projections")),
        "tied_embeddings": bool(c.get("share_input_output_layers")),
        "ffn_gated": bool(c.get("ffn_with_glu", True)),
        "max_context": int(c.get("max_context_length") or 2048),
    }


def megatron_hybrid_pattern(n_layers: int, attention_ratio: float, mlp_ratio: float) -> str:
    """Megatron-LM's automatic hybrid layer allocation, as a nemotron_h pattern ("M" Mamba,
    "*" attention, "-" MLP): attention evenly spaced between Mamba sections, then MLP layers
    spread over the Mamba ones (_allocate_auto in
    megatron/core/ssm/mamba_hybrid_layer_allocation.py, https://github.com/NVIDIA/Megatron-LM)."""
    n_att = round(n_layers * attention_ratio)
    n_mamba = n_layers - n_att
    section = n_mamba / (n_att + 1)
    kinds, x = ["M"] * n_layers, section
    for i in range(n_layers):
        if x < 0.5:
            kinds[i], x = "*", x + section
        else:
            x -= 1
    n_mlp = round(n_layers * mlp_ratio)
    if n_mlp:
        ratio = (n_mamba - n_mlp) / n_mlp
        x = ratio
        for i in range(n_layers):
            if kinds[i] != "M":
                continue
            if x < 0.5:
                kinds[i], x = "-", x + ratio
            else:
                x -= 1
    return "".join(kinds)
