"""A GGUF header as a model: exact weight bytes from the tensor table, the shape from metadata.

Metadata keys are llama.cpp's (`{arch}.block_count`, `{arch}.attention.head_count_kv`, ...:
https://github.com/ggml-org/llama.cpp/blob/master/src/llama-arch.cpp). Architectures whose
layers are all attention (the list below), and the 2026 layouts gguf_layouts reads (Gemma 4,
Qwen3-Next / 3.5, Nemotron-H), map onto `Architecture`, so their KV cache is computed; any
other still gets its exact weights, and its KV cache is flagged approximated.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tpscalc.catalog.schema import Architecture, FileWeights, Model
from tpscalc.catalog.slug import slugify
from tpscalc.catalog.validate import ValidationError
from tpscalc.estimate.tensors import LAZY_TENSORS
from tpscalc.sources.bounds import check_shape
from tpscalc.sources.gguf_header import GgufHeader, LongArray, TensorInfo, read_header
from tpscalc.sources.gguf_layouts import LAYOUTS
from tpscalc.sources.types import SourcedModel, SourceError

# GGUF architectures whose every layer is (full or sliding-window) attention + an FFN.
ATTENTION_ARCHS = frozenset({
    "llama", "mistral3", "qwen", "qwen2", "qwen2moe", "qwen3", "qwen3moe", "qwen2vl",
    "qwen3vl", "qwen3vlmoe", "gemma", "gemma2", "gemma3", "phi2", "phi3", "phimoe",
    "starcoder", "starcoder2", "gpt2", "gptneox", "falcon", "stablelm", "command-r", "cohere2",
    "olmo", "olmo2", "olmoe", "granite", "granitemoe", "deepseek", "deepseek2", "internlm2",
    "exaone", "minicpm", "glm4", "glm4moe", "gpt-oss", "dbrx", "arcee", "smollm3", "ernie4_5",
    "ernie4_5-moe", "seed_oss", "bailingmoe", "mistral", "mixtral",
})
# Where llama.cpp alternates sliding-window and global layers without a pattern key:
# layers per global layer (src/llama-model.cpp, set_swa_pattern).
SWA_PERIOD = {"gemma2": 2, "gemma3": 6, "cohere2": 4, "gpt-oss": 2}
# Tables llama.cpp reads row by row from the mapped file, never holding them whole, by their
# GGUF names
LAZY_GGUF_TENSORS = frozenset(f"{name}.weight" for name in LAZY_TENSORS)
EXPERT_MARK = "_exps"  # ffn_{gate,up,down}_exps: every expert of a layer in one tensor


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _per_layer(value: Any) -> tuple[int | None, tuple[int, ...] | None]:
    """(largest value, per-layer values when they differ) of an int or a per-layer array."""
    if isinstance(value, tuple) and value:
        values = tuple(int(v) for v in value)
        return max(values), (values if len(set(values)) > 1 else None)
    return _int(value), None


def _swa_layers(meta: dict[str, Any], arch: str, n_layers: int) -> int:
    pattern = meta.get(f"{arch}.attention.sliding_window_pattern")
    if isinstance(pattern, tuple):  # one bool per layer: True = sliding window
        return sum(bool(p) for p in pattern)
    period = _int(pattern) or SWA_PERIOD.get(arch)
    return n_layers - n_layers // period if period else n_layers


def _vocab(meta: dict[str, Any], arch: str, tensors: Sequence[TensorInfo]) -> int | None:
    tokens = meta.get("tokenizer.ggml.tokens")
    if _int(meta.get(f"{arch}.vocab_size")):
        return _int(meta.get(f"{arch}.vocab_size"))
    if isinstance(tokens, (LongArray, tuple)):
        return tokens.length if isinstance(tokens, LongArray) else len(tokens)
    embd = next((t for t in tensors if t.name == "token_embd.weight"), None)
    return embd.shape[-1] if embd is not None and len(embd.shape) > 1 else None


def _moe(g: Any) -> dict[str, Any]:
    n_exp = _int(g("expert_count"))
    if not n_exp or n_exp <= 1:
        return {}
    return {"num_experts": n_exp, "num_experts_active": _int(g("expert_used_count")) or 1,
            "num_shared_experts": _int(g("expert_shared_count")) or 0,
            "moe_intermediate_size": _int(g("expert_feed_forward_length")),
            "first_dense_layers": _int(g("leading_dense_block_count")) or 0}


def _mla(g: Any) -> dict[str, Any]:
    rank = _int(g("attention.kv_lora_rank"))
    if not rank:
        return {}
    rope = _int(g("rope.dimension_count"))
    key_mla, v_mla = _int(g("attention.key_length_mla")), _int(g("attention.value_length_mla"))
    return {"kv_lora_rank": rank, "q_lora_rank": _int(g("attention.q_lora_rank")),
            "qk_rope_head_dim": rope, "v_head_dim": v_mla,
            "qk_nope_head_dim": key_mla - rope if key_mla and rope and key_mla > rope else None}


def architecture(header: GgufHeader) -> tuple[Architecture | None, str]:
    """The catalog shape of the file's model, or None and why (then the KV is approximated)."""
    meta = header.metadata
    arch = str(meta.get("general.architecture") or "")
    if arch not in ATTENTION_ARCHS and arch not in LAYOUTS:
        return None, f"architecture {arch or '(none)'!r} is not one tpscalc models"

    def g(key: str) -> Any:
        return meta.get(f"{arch}.{key}")

    n_layers, hidden = _int(g("block_count")), _int(g("embedding_length"))
    heads, layer_heads = _per_layer(g("attention.head_count"))
    kv, layer_kv = _per_layer(g("attention.head_count_kv"))
    vocab = _vocab(meta, arch, header.tensors)
    if not (n_layers and hidden and heads and vocab):
        return None, "the metadata lacks block_count, embedding_length, head_count or a vocabulary"
    head_dim = _int(g("attention.key_length")) or hidden // heads
    window = _int(g("attention.sliding_window"))
    ffn, _ = _per_layer(g("feed_forward_length"))
    fields: dict[str, Any] = {
        "num_layers": n_layers, "hidden_size": hidden, "num_attention_heads": heads,
        "num_kv_heads": kv or heads, "head_dim": head_dim, "vocab_size": vocab,
        "intermediate_size": ffn or None, "max_context": _int(g("context_length")),
        "tied_embeddings": not any(t.name == "output.weight" for t in header.tensors),
        "layer_num_heads": layer_heads, "layer_num_kv_heads": layer_kv,
        "sliding_window": window,
        "sliding_window_layers": _swa_layers(meta, arch, n_layers) if window else 0,
        "source": f"gguf:{header.path.name}",
        **_moe(g), **_mla(g),
    }
    if arch in LAYOUTS:  # 2026 layouts: global heads, shared caches, linear/Mamba layers
        layout = LAYOUTS[arch](g, n_layers, layer_kv, {t.name for t in header.tensors})
        if isinstance(layout, str):
            return None, layout
        fields.update(layout)
    if fields["layer_num_kv_heads"] and 0 in fields["layer_num_kv_heads"]:
        return None, "some layers have no attention (a hybrid stack)"
    check_shape(fields, header.path.name, {
        "num_layers": f"{arch}.block_count", "hidden_size": f"{arch}.embedding_length",
        "num_attention_heads": f"{arch}.attention.head_count",
        "num_kv_heads": f"{arch}.attention.head_count_kv",
        "max_context": f"{arch}.context_length", "vocab_size": "the vocabulary"})
    try:
        return Architecture.model_validate(fields), ""
    except ValidationError as exc:
        return None, f"its metadata does not form a known shape ({exc.errors()[0]['msg']})"


def _format(header: GgufHeader) -> str:
    """The file type ("Q4_K_M"), else the tensor type holding most of the bytes."""
    from gguf.constants import LlamaFileType

    ftype = _int(header.metadata.get("general.file_type"))
    try:
        name = LlamaFileType(ftype).name if ftype is not None else "GUESSED"
    except ValueError:
        name = "GUESSED"
    if name != "GUESSED":
        return name.removeprefix("MOSTLY_").removeprefix("ALL_")
    by_type: dict[str, int] = {}
    for t in header.tensors:
        by_type[t.type_name] = by_type.get(t.type_name, 0) + t.n_bytes
    return max(by_type, key=lambda k: by_type[k])


def _read_per_token(header: GgufHeader, arch: Architecture | None) -> float:
    """Bytes one decode step reads: every tensor but the embedding, active experts only."""
    share = 1.0
    if arch is not None and arch.num_experts and arch.num_experts_active:
        share = arch.num_experts_active / arch.num_experts
    tied, total = arch_tied(header), 0.0
    for t in header.tensors:
        if (t.name == "token_embd.weight" and not tied) or t.name in LAZY_GGUF_TENSORS:
            continue  # one row per token is read, not the table
        total += t.n_bytes * (share if EXPERT_MARK in t.name else 1.0)
    return total


def arch_tied(header: GgufHeader) -> bool:
    """True when the embedding doubles as the output matrix (no output.weight tensor)."""
    return not any(t.name == "output.weight" for t in header.tensors)


def model_from_header(header: GgufHeader) -> SourcedModel:
    """The model a GGUF header describes, with its exact weight bytes (SourceError when empty)."""
    if not header.tensors:
        raise SourceError(f"{header.path.name}: the GGUF holds no tensors", "bad_gguf")
    arch, why = architecture(header)
    n_params = sum(t.n_elements for t in header.tensors)
    share = (arch.num_experts_active / arch.num_experts
             if arch is not None and arch.num_experts and arch.num_experts_active else 1.0)
    active = sum(t.n_elements * (share if EXPERT_MARK in t.name else 1.0) for t in header.tensors)
    if arch is not None:
        arch = arch.model_copy(update={"params_total": n_params,
                                       "params_active": max(1, round(active))})
    name = str(header.metadata.get("general.name") or header.path.stem)
    fname = header.path.name + (f" (+{header.shards - 1} shards)" if header.shards > 1 else "")
    weights = FileWeights.model_validate({
        "format": _format(header),
        "bytes_stored": sum(t.n_bytes for t in header.tensors
                            if t.name not in LAZY_GGUF_TENSORS),
        "bytes_read_per_token": max(1.0, _read_per_token(header, arch)),
        "source": header.path.name})
    model = Model.model_validate({"name": name, "slug": slugify(name) or "gguf-file",
                                  "parameters": float(n_params), "architecture": arch,
                                  "file_weights": weights})
    kv_source = (f"file {fname} (metadata, {header.metadata.get('general.architecture')})"
                 if arch is not None else f"approximated from the parameter count: {why}")
    return SourcedModel(model, {
        "weights": f"file {fname} (tensor sizes, exact)",
        "parameters": f"file {fname} (tensor shapes, exact)",
        "kv_cache": kv_source,
    })


def read_gguf(path: str | Path) -> SourcedModel:
    """The model in the GGUF file at `path` (any shard of a split file), from its header only."""
    return model_from_header(read_header(Path(path)))
