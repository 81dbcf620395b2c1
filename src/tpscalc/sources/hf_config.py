"""A Hugging Face config.json (and optionally model.safetensors.index.json) as a model.

The field mapping follows the catalog builder's (`tools/archsources.py`, `arch_from_hf_config`)
for plain attention + FFN stacks, so a config gives the same shape, and the same KV cache, as
the catalog entry built from it. Heterogeneous stacks (Mamba hybrids, NAS-pruned, Llama 4)
need the builder's per-family rules and are refused here with a message.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from tpscalc.catalog.schema import Architecture, Model
from tpscalc.catalog.slug import slugify
from tpscalc.catalog.validate import ValidationError
from tpscalc.estimate.tensors import parameter_counts
from tpscalc.sources.bounds import check_shape
from tpscalc.sources.files import load_json_file
from tpscalc.sources.types import SourcedModel, SourceError

# HF model_type families whose MLP is up+down only (no gate): GPT-2-style, StarCoder2, Phi-2,
# Falcon, GPT-NeoX/Pythia, BLOOM, OPT, MPT (transformers' modeling_<type>.py MLP classes).
UNGATED_TYPES = frozenset({"gpt2", "gpt_bigcode", "starcoder2", "phi", "falcon", "gpt_neox",
                           "gptj", "bloom", "opt", "mpt", "nemotron", "gpt_neo", "codegen"})
# Families normalised with LayerNorm (weight + bias) rather than RMSNorm.
LAYERNORM_TYPES = frozenset({"gpt2", "gpt_bigcode", "starcoder2", "phi", "falcon", "gpt_neox",
                             "gptj", "bloom", "opt", "stablelm", "gpt_neo", "codegen",
                             "persimmon"})
# Families with per-head q/k RMSNorm (transformers modeling_qwen3.py, gemma3, olmo2).
QK_NORM_TYPES = frozenset({"qwen3", "qwen3_moe", "gemma3", "gemma3_text", "olmo2", "qwen3_next",
                           "qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text",
                           "qwen3_vl_text", "qwen3_vl_moe_text", "olmo3", "mimo", "gemma4",
                           "gemma4_text"})
POST_NORM_TYPES = frozenset({"gemma2", "gemma3", "gemma3_text", "olmo2", "olmo3", "gemma4",
                             "gemma4_text"})
# Families with a bias on q, k and v only (transformers modeling_qwen2.py: qkv bias=True).
QKV_BIAS_TYPES = frozenset({"qwen2", "qwen2_moe", "qwen2_vl", "qwen2_5_vl"})
# Families whose HF config class keeps PretrainedConfig's tie_word_embeddings=True default.
TIED_BY_DEFAULT = frozenset({"gemma", "gemma2", "gemma3", "gemma3_text", "gpt2", "gpt_bigcode",
                             "starcoder2"})
# Configs whose layers --config does not read: not "attention + FFN" blocks (Mamba hybrids,
# encoders, RWKV) or per-layer families (Llama 4); the catalog build converts Nemotron-H, NAS
# and Llama 4 configs itself (tools/archfamilies.py, with its own UNSUPPORTED_TYPES).
UNSUPPORTED_TYPES = frozenset({"jamba", "mamba", "mamba2", "falcon_h1", "zamba2",
                               "granitemoehybrid", "rwkv", "rwkv5", "t5", "bert", "modernbert",
                               "xlm-roberta", "llama4", "llama4_text"})
DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "float8_e4m3fn": 1}


def first_value(c: dict[str, Any], *keys: str) -> Any:
    """The value of the first of `keys` that `c` sets (configs name one fact many ways)."""
    return next((c[k] for k in keys if c.get(k) is not None), None)


def text_config(cfg: dict[str, Any]) -> dict[str, Any]:
    """The language-model part of a (possibly multimodal) config, top-level keys as fallback."""
    for key in ("text_config", "llm_config", "language_config"):
        sub = cfg.get(key)
        if isinstance(sub, dict) and sub.get("hidden_size"):
            return {**{k: v for k, v in cfg.items() if not isinstance(v, dict)}, **sub}
    return cfg


def layer_counts(c: dict[str, Any], n_layers: int) -> tuple[int | None, int, int]:
    """(sliding window, sliding layers, linear-attention layers) from layer_types & co."""
    types = c.get("layer_types") or []
    n_lin = sum(1 for t in types if "linear" in str(t))
    if not n_lin and c.get("full_attention_interval"):
        n_lin = n_layers - n_layers // int(c["full_attention_interval"])
    window = c.get("sliding_window") if c.get("use_sliding_window", True) is not False else None
    if not window:
        return None, 0, n_lin
    if types:
        n_slide = sum(1 for t in types if "sliding" in str(t))
    elif isinstance(c.get("hybrid_layer_pattern"), list):  # MiMo-V2: 1 = sliding, 0 = full
        n_slide = sum(1 for v in c["hybrid_layer_pattern"] if v)
    elif c.get("sliding_window_pattern"):  # Gemma 3: 5 local layers then 1 global
        n_slide = n_layers - n_layers // int(c["sliding_window_pattern"])
    elif c.get("model_type") == "gemma2":  # Gemma 2 alternates local and global layers
        n_slide = n_layers // 2
    else:
        n_slide = n_layers - n_lin
    return int(window), n_slide, n_lin


def moe_fields(c: dict[str, Any]) -> dict[str, Any]:
    """Experts, active experts, widths, shared experts and dense first layers of a config."""
    n_exp = first_value(c, "num_experts", "n_routed_experts", "num_local_experts",
                        "moe_num_experts")
    if not n_exp or int(n_exp) <= 1:
        return {}
    active = first_value(c, "num_experts_per_tok", "top_k_experts", "experts_per_token", "moe_k",
                    "num_selected_experts")
    moe_inter = first_value(c, "moe_intermediate_size", "expert_intermediate_size")
    if moe_inter is None:  # Mixtral, gpt-oss: intermediate_size is the expert width
        moe_inter = c.get("intermediate_size")
    shared = int(c.get("n_shared_experts") or c.get("num_shared_experts") or 0)
    sh_size = c.get("shared_expert_intermediate_size")
    if not shared and sh_size and moe_inter:
        shared = max(1, round(int(sh_size) / int(moe_inter)))
    nemotron_sh = c.get("moe_shared_expert_intermediate_size")  # nemotron_h: the one shared
    if shared and nemotron_sh and moe_inter:  # expert's own width, in expert widths
        shared = max(1, round(int(nemotron_sh) / int(moe_inter)))
    first_dense = int(first_value(c, "first_k_dense_replace", "num_dense_layers") or 0)
    if c.get("mlp_only_layers") and not first_dense:
        first_dense = len(c["mlp_only_layers"])
    out: dict[str, Any] = {
        "num_experts": int(n_exp), "num_experts_active": int(active or 1),
        "moe_intermediate_size": int(moe_inter) if moe_inter else None,
        "num_shared_experts": shared, "first_dense_layers": first_dense}
    if c.get("moe_latent_size"):
        out["moe_latent_size"] = int(c["moe_latent_size"])
    return out


def mla_fields(c: dict[str, Any]) -> dict[str, Any]:
    """Multi-head latent attention ranks and head sizes (DeepSeek-V2/V3, Kimi), when present."""
    if not c.get("kv_lora_rank"):
        return {}
    keys = ("kv_lora_rank", "q_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim")
    return {k: int(c[k]) for k in keys if c.get(k)}


def linear_fields(c: dict[str, Any]) -> dict[str, Any]:
    """Gated DeltaNet (linear attention) head counts, sizes and convolution kernel."""
    keys = ("linear_num_key_heads", "linear_key_head_dim", "linear_num_value_heads",
            "linear_value_head_dim")
    out: dict[str, Any] = {k: int(c[k]) for k in keys if c.get(k)}
    if c.get("linear_conv_kernel_dim"):
        out["linear_conv_kernel"] = int(c["linear_conv_kernel_dim"])
    return out


def global_fields(c: dict[str, Any], head_dim: int, kv_heads: int) -> dict[str, Any]:
    """Head shape of the full-attention layers where it differs from the sliding ones
    (Gemma 4: `global_head_dim`, `num_global_key_value_heads`, `attention_k_eq_v`, as
    transformers' Gemma4TextConfig names them), and the KV-shared layers
    (`num_kv_shared_layers`: Gemma 3n and 4)."""
    out: dict[str, Any] = {}
    g_dim, g_kv = c.get("global_head_dim"), c.get("num_global_key_value_heads")
    if g_dim and int(g_dim) != head_dim:
        out["global_head_dim"] = int(g_dim)
    if g_kv and int(g_kv) != kv_heads:
        out["global_num_kv_heads"] = int(g_kv)
    if c.get("attention_k_eq_v"):
        out["global_k_eq_v"] = True
    if c.get("num_kv_shared_layers"):
        out["kv_shared_layers"] = int(c["num_kv_shared_layers"])
    return out


def per_layer_fields(c: dict[str, Any], n_layers: int) -> dict[str, Any]:
    """Gemma 4's per-layer embeddings (`hidden_size_per_layer_input`, 0 or null in the 26B and
    31B) and its double-wide FFN (`use_double_wide_mlp`: the KV-shared layers have twice the
    FFN width, transformers' Gemma4TextMLP and llama.cpp's per-layer n_ff)."""
    out: dict[str, Any] = {}
    if c.get("hidden_size_per_layer_input"):
        out["per_layer_input_size"] = int(c["hidden_size_per_layer_input"])
    shared, inter = int(c.get("num_kv_shared_layers") or 0), c.get("intermediate_size")
    if c.get("use_double_wide_mlp") and shared and inter:
        own = n_layers - shared
        out["layer_intermediate_sizes"] = (int(inter),) * own + (2 * int(inter),) * shared
    return out


REQUIRED_KEYS = ("num_hidden_layers", "hidden_size", "num_attention_heads", "vocab_size")
# The usual config.json name of the Architecture fields whose names differ (for messages).
CONFIG_NAMES = {"num_layers": "num_hidden_layers", "num_kv_heads": "num_key_value_heads",
                "max_context": "max_position_embeddings", "num_experts_active":
                "num_experts_per_tok"}


def shape_fields(cfg: dict[str, Any], source: str) -> dict[str, Any] | list[str]:
    """The Architecture fields of an attention + FFN config (the catalog build and --config
    share it), or the required keys it lacks."""
    c = text_config(cfg)
    mt = str(c.get("model_type") or cfg.get("model_type") or "")
    n_layers = first_value(c, "num_hidden_layers", "n_layer", "num_layers", "n_layers")
    if n_layers is None and isinstance(c.get("layers_block_type"), list):  # nemotron_h, newer
        n_layers = len(c["layers_block_type"])
    hidden = first_value(c, "hidden_size", "n_embd", "d_model")
    heads = first_value(c, "num_attention_heads", "n_head", "num_heads")
    vocab = first_value(c, "vocab_size", "padded_vocab_size")
    missing = [k for k, v in zip(REQUIRED_KEYS, (n_layers, hidden, heads, vocab)) if not v]
    if missing:
        return missing
    kv = first_value(c, "num_key_value_heads", "n_head_kv", "num_kv_heads", "multi_query_group_num")
    if kv is None:
        kv = 1 if c.get("multi_query") else heads
    window, n_slide, n_lin = layer_counts(c, int(n_layers))
    tied = c.get("tie_word_embeddings", cfg.get("tie_word_embeddings"))
    head_dim = int(c.get("head_dim") or int(hidden) // int(heads))
    return {
        "num_layers": int(n_layers), "hidden_size": int(hidden),
        "num_attention_heads": int(heads), "num_kv_heads": int(kv),
        "head_dim": head_dim, "vocab_size": int(vocab),
        "intermediate_size": first_value(c, "intermediate_size", "ffn_hidden_size", "n_inner"),
        "max_context": first_value(c, "max_position_embeddings", "n_positions", "seq_length",
                                   "context_window_size"),
        "tied_embeddings": bool(tied) if tied is not None else mt in TIED_BY_DEFAULT,
        "ffn_gated": mt not in UNGATED_TYPES,
        "attention_bias": bool(c.get("attention_bias") or c.get("qkv_bias")
                               or mt in QKV_BIAS_TYPES),
        "linear_bias": (bool(c.get("use_bias")) if mt == "starcoder2"
                        else mt in {"phi", "gpt2", "gpt_bigcode"}),
        "norm_bias": mt in LAYERNORM_TYPES,
        "qk_norm": mt in QK_NORM_TYPES or bool(c.get("use_qk_norm")),
        "post_norms": mt in POST_NORM_TYPES, "attn_output_gate": bool(c.get("attn_output_gate")),
        "sliding_window": window, "sliding_window_layers": n_slide,
        "linear_attention_layers": n_lin, "source": source,
        **moe_fields(c), **mla_fields(c), **linear_fields(c),
        **global_fields(c, head_dim, int(kv)), **per_layer_fields(c, int(n_layers)),
    }


def architecture_from_config(cfg: dict[str, Any], name: str) -> Architecture:
    """The shape a config.json describes, with exact parameter counts (SourceError if not)."""
    c = text_config(cfg)
    mt = str(c.get("model_type") or cfg.get("model_type") or "")
    if mt in UNSUPPORTED_TYPES or c.get("hybrid_override_pattern") or c.get("block_configs"):
        raise SourceError(f"{name}: model_type {mt!r} has a layer structure that --config does "
                          "not read yet", "bad_config")
    try:
        fields = shape_fields(cfg, f"config:{name}")
    except (TypeError, ValueError, OverflowError) as exc:  # "hidden_size": "big", [1], 1e400
        raise SourceError(f"{name}: a shape field is not a number ({exc})".splitlines()[0],
                          "bad_config") from None
    if isinstance(fields, list):
        raise SourceError(f"{name}: the config lacks {', '.join(fields)}", "bad_config")
    check_shape(fields, name, CONFIG_NAMES)
    try:
        arch = Architecture.model_validate(fields)
    except (ValidationError, TypeError, ValueError) as exc:
        msg = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
        raise SourceError(f"{name}: the config does not form a valid shape ({msg})",
                          "bad_config") from None
    total, active = parameter_counts(arch)
    return arch.model_copy(update={"params_total": total, "params_active": active})


def _load_json(path: Path) -> dict[str, Any]:
    data = load_json_file(path, "a config")
    if not isinstance(data, dict):
        raise SourceError(f"{path.name}: not a config object", "bad_config")
    return data


def index_parameters(index: dict[str, Any], cfg: dict[str, Any], name: str) -> tuple[int, str]:
    """(parameters, how) from a safetensors index: total_parameters, else total_size ÷ dtype."""
    found = index.get("metadata")
    meta: dict[str, Any] = found if isinstance(found, dict) else {}
    if isinstance(meta.get("total_parameters"), int) and meta["total_parameters"] > 0:
        return int(meta["total_parameters"]), f"index {name} (total_parameters)"
    size, dtype = meta.get("total_size"), str(cfg.get("torch_dtype") or cfg.get("dtype") or "")
    if not isinstance(size, int) or size <= 0 or dtype not in DTYPE_BYTES:
        raise SourceError(f"{name}: needs metadata.total_parameters, or total_size with the "
                          "config's torch_dtype", "bad_config")
    return size // DTYPE_BYTES[dtype], f"index {name} (total_size ÷ {DTYPE_BYTES[dtype]} B)"


def model_from_config(cfg: dict[str, Any], name: str, index: dict[str, Any] | None = None,
                      index_name: str = "", label: str = "") -> SourcedModel:
    """The model a config.json dict describes (and its safetensors index, when given).

    name: the config's file name, as the sources cite it; label: the model's name (default:
    the config's _name_or_path, else the file name's stem).
    """
    arch = architecture_from_config(cfg, name)
    sources = {"architecture": f"config {name}", "kv_cache": f"config {name}",
               "weights": f"computed from config {name} (llama.cpp quantization rules)",
               "parameters": f"config {name} (counted from the shape)"}
    if index is not None:  # the stored count wins over the one counted from the shape
        n, sources["parameters"] = index_parameters(index, cfg, index_name)
        total, active = arch.params_total or n, arch.params_active or n
        arch = arch.model_copy(update={"params_total": n,
                                       "params_active": max(1, round(active * n / total))})
    params = float(arch.params_total or 1)
    label = str(cfg.get("_name_or_path") or "") or label or Path(name).stem
    model = Model.model_validate({"name": label, "slug": "config-" + (slugify(label) or "model"),
                                  "parameters": params, "architecture": arch})
    return SourcedModel(model, sources)


def read_config(path: str | Path, index_path: str | Path | None = None) -> SourcedModel:
    """The model described by the config.json at `path` (and a safetensors index)."""
    p = Path(path)
    cfg = _load_json(p)
    index = _load_json(Path(index_path)) if index_path else None
    folder = p.resolve().parent.name if p.name == "config.json" else ""  # ~/models/Qwen3-8B/
    return model_from_config(cfg, p.name, index, Path(index_path).name if index_path else "",
                             label=folder)
