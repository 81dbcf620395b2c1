"""Architecture facts from the shared sources, converted to `tpscalc.catalog.schema.Architecture`.

Sources, in order of trust: aiconfigurator's verbatim Hugging Face config.json files, the
config.json files kept in tools/data/hf_configs/ (each cited in its SOURCES.csv), litgpt's
model configs, MLC-LLM's presets (HF config style), llmfit's HF model list (partial facts: no
FFN width for MoE, no tied/gated flags, but an exact safetensors parameter count).
"""
from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import archfamilies
import archvision
from pydantic import ValidationError

from tpscalc.catalog.schema import Architecture
from tpscalc.estimate.tensors import parameter_counts
from tpscalc.sources.hf_config import (
    LAYERNORM_TYPES,
    POST_NORM_TYPES,
    QK_NORM_TYPES,
    UNGATED_TYPES,
    shape_fields,
    text_config,
)

TRUST = ("aiconfigurator", "hfconfig", "litgpt", "mlc", "llmfit")
VERBATIM = frozenset({"aiconfigurator", "hfconfig"})  # whole config.json files

# Configs whose layers are not "attention + FFN" blocks (Mamba hybrids, encoders, RWKV); the
# other hybrids come from hand-map rows whose facts name the layer patterns.
UNSUPPORTED_TYPES = frozenset({"jamba", "mamba", "mamba2", "falcon_h1", "zamba2",
                               "granitemoehybrid", "rwkv", "rwkv5", "t5", "bert", "modernbert",
                               "xlm-roberta"})


# Facts llmfit's list cannot express, by HF model_type: its entries carry no kv_lora_rank, no
# sliding window or layer pattern, no shared-expert count for these families, no first dense
# layers, no linear-attention layers. An llmfit architecture of such a family is never
# completed by a guess: unless a hand-map row supplies the fact (a cited config.json), the
# architecture lists it in `unexpressed` and estimates from it are flagged approximated.
_MOE_EXTRAS = ("num_shared_experts", "first_dense_layers")
LLMFIT_UNEXPRESSED: dict[str, tuple[str, ...]] = {
    "deepseek_v2": ("kv_lora_rank", *_MOE_EXTRAS), "deepseek_v3": ("kv_lora_rank", *_MOE_EXTRAS),
    "kimi_k2": ("kv_lora_rank", *_MOE_EXTRAS),
    "kimi_linear": ("kv_lora_rank", "linear_attention_layers", *_MOE_EXTRAS),
    "deepseek": _MOE_EXTRAS, "glm4_moe": _MOE_EXTRAS, "glm4v_moe": _MOE_EXTRAS,
    "dots1": _MOE_EXTRAS, "bailing_moe": _MOE_EXTRAS, "ernie4_5_moe": _MOE_EXTRAS,
    "gemma2": ("sliding_window",), "gemma3": ("sliding_window",),
    "gemma3_text": ("sliding_window",), "cohere2": ("sliding_window",),
    "olmo3": ("sliding_window",), "exaone4": ("sliding_window",), "gpt_oss": ("sliding_window",),
    "qwen3_next": ("linear_attention_layers",), "minimax_m2": (),
}
# A hand-map override that supplies a fact (any of these keys) makes it expressed.
_EXPRESSED_BY = {"kv_lora_rank": ("kv_lora_rank",), "sliding_window": ("sliding_window",),
                 "linear_attention_layers": ("linear_attention_layers", "layer_mixers"),
                 "num_shared_experts": ("num_shared_experts", "layer_ffns"),
                 "first_dense_layers": ("first_dense_layers", "layer_ffns")}


def llmfit_unexpressed(family: str, overrides: dict[str, Any] | None) -> tuple[str, ...]:
    """The facts an llmfit entry of `family` lacks that `overrides` do not supply."""
    given = set(overrides or {})
    return tuple(f for f in LLMFIT_UNEXPRESSED.get(family, ())
                 if not given & set(_EXPRESSED_BY[f]))


@dataclass(frozen=True)
class Candidate:
    """One architecture a source offers, under the key and repository it gives."""

    source: str  # "litgpt"
    key: str  # "Llama-2-7b-hf"
    repo: str | None  # "meta-llama/Llama-2-7b-hf"
    arch: Architecture | None
    why_none: str = ""
    downloads: int = 0

    @property
    def label(self) -> str:
        """`source:key`, as `Architecture.source` records it."""
        return f"{self.source}:{self.key}"


def arch_from_hf_config(cfg: dict[str, Any], source: str) -> Architecture | str:
    """An Architecture from an HF config.json dict, or the reason it cannot be expressed."""
    c = text_config(cfg)
    mt = str(c.get("model_type") or cfg.get("model_type") or "")
    if mt in UNSUPPORTED_TYPES:
        return f"unsupported layer structure ({mt})"
    fields = shape_fields(cfg, source)
    if isinstance(fields, list):
        return "missing layers/hidden/heads/vocab"
    n_layers = int(fields["num_layers"])
    fields["vision"] = archvision.vision_from_hf_config(cfg)
    family = _family_fields(c, mt, n_layers)
    if isinstance(family, str):
        return family
    if "layer_mixers" in family:  # the schema counts the attention-free layers itself
        fields.pop("linear_attention_layers")
    fields.update(family)
    return _validated(fields)


def _family_fields(c: dict[str, Any], mt: str, n_layers: int) -> dict[str, Any] | str:
    """Per-layer facts of the heterogeneous families (tools/archfamilies.py)."""
    if c.get("hybrid_override_pattern") or (mt == "nemotron_h"
                                            and archfamilies.nemotron_h_pattern(c)):
        return archfamilies.nemotron_h_fields(c)
    if c.get("block_configs"):
        return archfamilies.nas_fields(c)
    if mt in ("llama4", "llama4_text"):
        return archfamilies.llama4_fields(c, n_layers)
    ratios = c.get("compress_ratios")
    if isinstance(ratios, list) and len(ratios) >= n_layers:  # DeepSeek-V4 (+ its MTP layer)
        out: dict[str, Any] = {"compress_ratios": tuple(int(r) for r in ratios[:n_layers])}
        if c.get("index_head_dim"):
            out["index_head_dim"] = int(c["index_head_dim"])
        return out
    return {}


def _validated(fields: dict[str, Any]) -> Architecture | str:
    """The Architecture with exact parameter counts, or the validation message."""
    try:
        arch = Architecture.model_validate(fields)
    except ValidationError as exc:
        return f"invalid: {exc.errors()[0]['msg']}"
    total, active = parameter_counts(arch)
    return arch.model_copy(update={"params_total": total, "params_active": active})


def arch_from_litgpt(cfg: dict[str, Any]) -> Architecture | str:
    """An Architecture from one litgpt config (litgpt/config.py field names)."""
    mlp = cfg.get("mlp_class_name", "")
    n_exp = cfg.get("n_expert") or 0
    windows = cfg.get("sliding_window_indices")
    n_layers = int(cfg["n_layer"])
    n_slide = sum(windows) if isinstance(windows, list) else n_layers
    n_slide = n_slide if cfg.get("sliding_window_size") else 0
    name = str(cfg["name"]).lower()
    if cfg.get("latent_attention"):
        return "latent attention config not converted"
    fields: dict[str, Any] = {
        "num_layers": n_layers, "hidden_size": int(cfg["n_embd"]),
        "num_attention_heads": int(cfg["n_head"]), "num_kv_heads": int(cfg["n_query_groups"]),
        "head_dim": int(cfg["head_size"]), "vocab_size": int(cfg["padded_vocab_size"]),
        "intermediate_size": cfg.get("intermediate_size"), "max_context": cfg.get("block_size"),
        "tied_embeddings": "gemma" in name,  # litgpt ties lm_head for Gemma (litgpt/model.py)
        "ffn_gated": mlp != "GptNeoxMLP", "attention_bias": bool(cfg.get("attn_bias")),
        "linear_bias": bool(cfg.get("bias")),
        "norm_bias": cfg.get("norm_class_name") == "LayerNorm",
        "qk_norm": bool(cfg.get("norm_qk")),
        "post_norms": bool(cfg.get("post_attention_norm") and cfg.get("post_mlp_norm")),
        "sliding_window": cfg.get("sliding_window_size"), "sliding_window_layers": n_slide,
        "source": f"litgpt:{cfg['name']}",
    }
    if n_exp and n_exp > 1:
        fields.update(num_experts=int(n_exp), num_experts_active=int(cfg["n_expert_per_token"]),
                      moe_intermediate_size=(cfg.get("moe_intermediate_size")
                                             or cfg.get("intermediate_size")),
                      num_shared_experts=int(cfg.get("n_shared_expert") or 0),
                      first_dense_layers=int(cfg.get("first_k_dense_replace") or 0))
    return _validated(fields)


def tie_from_count(arch: Architecture, count: float | None,
                   tolerance: float = 0.005) -> Architecture | None:
    """`arch` tied where only the tied shape reproduces `count` (an exact safetensors count,
    llmfit's `parameters_raw`) within `tolerance`; else None. litgpt's configs carry no tie
    flag (arch_from_litgpt ties Gemma by name only), so Llama 3.2 3B and Qwen3-4B came out
    with a separate output head: 3.61 B and 4.41 B against 3.21 B and 4.02 B. Never the other
    way: a tied model's repository may still store a copy of the head (C2S-Scale, a Gemma 2
    27B), which llama.cpp's converter drops."""
    if not count or not arch.params_total or arch.tied_embeddings:
        return None
    fields = dict(arch.model_dump(exclude={"params_total", "params_active"}),
                  tied_embeddings=True)
    other = _validated(fields)
    if isinstance(other, str) or not other.params_total:
        return None
    if abs(other.params_total / count - 1) <= tolerance < abs(arch.params_total / count - 1):
        return other
    return None


# Hand-map override names (Architecture fields) → llmfit's keys, so that a map row can supply
# the layer facts an llmfit entry lacks and still be checked against llmfit's exact count.
_LLMFIT_KEYS = {"num_layers": "num_hidden_layers", "hidden_size": "hidden_size",
                "num_attention_heads": "num_attention_heads", "num_kv_heads": "num_key_value_heads",
                "head_dim": "head_dim", "vocab_size": "vocab_size"}


def _llmfit_fields(e: dict[str, Any],
                   overrides: dict[str, Any] | None = None) -> dict[str, Any] | str:
    e = dict(e, **{_LLMFIT_KEYS[k]: v for k, v in (overrides or {}).items() if k in _LLMFIT_KEYS})
    keys = ("num_hidden_layers", "hidden_size", "num_attention_heads", "vocab_size")
    if not all(e.get(k) for k in keys):
        return "llmfit entry without layer facts"
    heads = int(e["num_attention_heads"])
    fields: dict[str, Any] = {
        "num_layers": int(e["num_hidden_layers"]), "hidden_size": int(e["hidden_size"]),
        "num_attention_heads": heads, "num_kv_heads": int(e.get("num_key_value_heads") or heads),
        "head_dim": int(e.get("head_dim") or int(e["hidden_size"]) // heads),
        "vocab_size": int(e["vocab_size"]), "max_context": e.get("context_length") or None,
        "source": f"llmfit:{e['name']}",
    }
    inter = e.get("moe_intermediate_size")
    if inter and e.get("architecture") == "qwen":
        # Qwen (1.0) splits intermediate_size over w1 and w2: ff_dim_in = intermediate_size // 2
        # (modeling_qwen.py in https://huggingface.co/Qwen/Qwen-7B)
        inter //= 2
    if e.get("is_moe") and (e.get("num_experts") or 0) > 1:
        fields.update(num_experts=int(e["num_experts"]),
                      num_experts_active=int(e.get("active_experts") or 1),
                      moe_intermediate_size=inter or None)
        sh = e.get("shared_expert_intermediate_size")
        if sh and inter:
            fields["num_shared_experts"] = max(1, round(sh / inter))
    else:
        fields["intermediate_size"] = inter or None
    return fields


def arch_from_llmfit(e: dict[str, Any], overrides: dict[str, Any] | None = None,
                     tolerance: float = 0.02) -> Architecture | str:
    """An Architecture from llmfit's partial facts (then `overrides`, Architecture field names):
    the tied/gated/bias flags that reproduce its exact safetensors count (`parameters_raw`)
    within `tolerance`; else the reason it failed."""
    base = _llmfit_fields(e, overrides)
    if isinstance(base, str):
        return base
    base.update(overrides or {})
    ref = e.get("parameters_raw") or 0
    if ref < 1e6 or (not base.get("intermediate_size") and not base.get("moe_intermediate_size")):
        return "llmfit entry without FFN width or parameter count"
    mt = str(e.get("architecture") or "")
    missing = llmfit_unexpressed(mt, overrides)
    if missing:
        base["unexpressed"] = missing
    best: tuple[float, Architecture] | None = None
    gated = mt not in UNGATED_TYPES  # the family decides; only tied and bias are searched
    for tied, bias in itertools.product((False, True), repeat=2):
        fields = dict({"tied_embeddings": tied, "ffn_gated": gated, "attention_bias": bias,
                           "norm_bias": mt in LAYERNORM_TYPES, "qk_norm": mt in QK_NORM_TYPES,
                           "post_norms": mt in POST_NORM_TYPES}, **base)
        arch = _validated(fields)
        if isinstance(arch, str):
            return arch
        err = abs((arch.params_total or 0) / ref - 1)
        if best is None or err < best[0] - 1e-9:
            best = (err, arch)
    assert best is not None
    if best[0] > tolerance:
        return (f"llmfit facts give {best[1].params_total / 1e9:.2f} B, "
                f"its own count {ref / 1e9:.2f} B")
    return best[1]


def load_aiconfigurator(folder: Path, source: str = "aiconfigurator") -> list[Candidate]:
    """Every `<org>--<name>_config.json` in `folder` (quantization configs skipped), as `source`."""
    out = []
    for path in sorted(folder.glob("*_config.json")):
        if path.name.endswith("_hf_quant_config.json"):
            continue
        stem = path.name[: -len("_config.json")]
        repo = stem.replace("--", "/", 1)
        arch = arch_from_hf_config(json.loads(path.read_text()), f"{source}:{stem}")
        out.append(_candidate(source, stem, repo, arch))
    return out


def load_litgpt(path: Path) -> list[Candidate]:
    """Every config of litgpt's list."""
    return [_candidate("litgpt", c["name"], c.get("hf_repo"), arch_from_litgpt(c))
            for c in json.loads(path.read_text())]


def load_mlc(path: Path) -> list[Candidate]:
    """Every preset of MLC-LLM's list (HF config dicts without a repository id)."""
    return [_candidate("mlc", key, None, arch_from_hf_config(cfg, f"mlc:{key}"))
            for key, cfg in json.loads(path.read_text()).items()]


def load_llmfit(path: Path, with_layers_only: bool = True) -> list[dict[str, Any]]:
    """Every entry of llmfit's list (by default only those that carry layer facts; converted on
    demand: see `llmfit_candidate`, since checking 12,000 entries takes a minute)."""
    entries = json.loads(path.read_text())
    return [e for e in entries if e.get("num_hidden_layers") or not with_layers_only]


def llmfit_candidate(e: dict[str, Any], overrides: dict[str, Any] | None = None) -> Candidate:
    """The Candidate for one llmfit entry, its facts first updated with `overrides`."""
    # Hand-kept overrides add facts llmfit lacks; its count may then include extra (MTP) layers.
    arch = arch_from_llmfit(e, overrides, tolerance=0.05 if overrides else 0.02)
    return _candidate("llmfit", e["name"], e["name"], arch, int(e.get("hf_downloads") or 0))


def _candidate(source: str, key: str, repo: str | None, arch: Architecture | str,
               downloads: int = 0) -> Candidate:
    if isinstance(arch, str):
        return Candidate(source, key, repo, None, arch, downloads)
    return Candidate(source, key, repo, arch, "", downloads)
