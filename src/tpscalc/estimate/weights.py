"""Weight bytes of a model at a llama.cpp file type (Q4_K_M, Q8_0, ...), tensor by tensor.

A llama.cpp file type is a *mix*: `llama-quantize` picks a ggml type per tensor from its name,
its layer and the model's shape (`llama_tensor_get_type` in llama.cpp's src/llama-quant.cpp,
https://github.com/ggml-org/llama.cpp/blob/master/src/llama-quant.cpp). This module restates
those rules for the tensors of `tensors.tensor_inventory` and sizes each tensor with the block
size and block bytes of gguf's `GGML_QUANT_SIZES`, as copied into the catalog's ggml_types.json
(no gguf import at run time). Sizes are bytes; the GiB that llama-bench prints is bytes / 2^30.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache, lru_cache

from tpscalc.catalog.schema import Architecture, Quantization
from tpscalc.catalog.store import ggml_block_sizes
from tpscalc.estimate.tensors import LAZY_TENSORS, TensorSpec, active_fraction, tensor_inventory
from tpscalc.estimate.types import UNQUANTIZED

# llama_ftype_get_default_type() in src/llama-quant.cpp: the ggml type a file type starts from.
FTYPE_DEFAULT_TYPE: dict[str, str] = {
    "F32": "F32", "F16": "F16", "BF16": "BF16",
    "Q4_0": "Q4_0", "Q4_1": "Q4_1", "Q5_0": "Q5_0", "Q5_1": "Q5_1", "Q8_0": "Q8_0",
    "Q2_K": "Q2_K", "Q2_K_S": "Q2_K",
    "Q3_K_S": "Q3_K", "Q3_K_M": "Q3_K", "Q3_K_L": "Q3_K",
    "Q4_K_S": "Q4_K", "Q4_K_M": "Q4_K", "Q5_K_S": "Q5_K", "Q5_K_M": "Q5_K", "Q6_K": "Q6_K",
    "IQ1_S": "IQ1_S", "IQ1_M": "IQ1_M",
    "IQ2_XXS": "IQ2_XXS", "IQ2_XS": "IQ2_XS", "IQ2_S": "IQ2_XS", "IQ2_M": "IQ2_S",
    "IQ3_XXS": "IQ3_XXS", "IQ3_XS": "IQ3_S", "IQ3_S": "IQ3_S", "IQ3_M": "IQ3_S",
    "IQ4_NL": "IQ4_NL", "IQ4_XS": "IQ4_XS",
    "TQ1_0": "TQ1_0", "TQ2_0": "TQ2_0",
    "MXFP4_MOE": "MXFP4",
}
# File types whose low-bit tensors llama-quantize refuses to write without an importance
# matrix (tensor_requires_imatrix in src/llama-quant.cpp); IQ files are in practice always made
# with one, so the imatrix-dependent rules default to "with imatrix" for every IQ type.
_IQ2_FAMILY = frozenset({"IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ2_M", "IQ1_S", "IQ1_M"})
# tensor_type_fallback() in src/llama-quant.cpp: row length not a multiple of the block size.
_FALLBACK = {
    "IQ1_S": "IQ4_NL", "IQ1_M": "IQ4_NL", "IQ2_XXS": "IQ4_NL", "IQ2_XS": "IQ4_NL",
    "IQ2_S": "IQ4_NL", "IQ3_XXS": "IQ4_NL", "IQ3_S": "IQ4_NL", "IQ4_XS": "IQ4_NL",
    "Q2_K": "Q4_0", "Q3_K": "Q4_0", "TQ1_0": "Q4_0", "TQ2_0": "Q4_0",
    "Q4_K": "Q5_0", "Q5_K": "Q5_1", "Q6_K": "Q8_0",
}
_NOT_QUANTIZED = ("ffn_gate_inp", "ssm_conv1d", "shortconv", "pos_embd", "token_types",
                  "per_layer_model_proj", "altup", "laurel",  # small (Gemma 3n and 4)
                  # BERT's learned positions (LLM_TENSOR_POS_EMBD), T5's relative position bias
                  # and RWKV's small 2-D weights: tensor_allows_quantization in llama-quant.cpp
                  "position_embd", "attn_rel_b", "cross_attn_rel_b",
                  "time_mix_first", "time_mix_w1", "time_mix_w2", "time_mix_decay_w1",
                  "time_mix_decay_w2", "time_mix_lerp_fused")


def canonical_ftype(ftype: str) -> str:
    """The llama.cpp file type name ("q4_k_m" → "Q4_K_M"); ValueError listing close names."""
    name = ftype.strip().upper().replace("-", "_")
    name = {"MXFP4": "MXFP4_MOE", "FP16": "F16", "FP32": "F32"}.get(name, name)
    if name not in FTYPE_DEFAULT_TYPE:
        from difflib import get_close_matches  # on an unknown name only

        close = get_close_matches(name, list(FTYPE_DEFAULT_TYPE), n=4, cutoff=0.5)
        raise ValueError(f"unknown llama.cpp file type {ftype!r}; closest: {', '.join(close)}")
    return name


def ggml_type_bytes(ggml_type: str, n_elements: int) -> float:
    """Bytes of `n_elements` values stored as `ggml_type` (block size, block bytes from gguf)."""
    block, size = ggml_block_sizes()[ggml_type]
    return n_elements * size / block


def _block_size(ggml_type: str) -> int:
    return ggml_block_sizes()[ggml_type][0]


@dataclass(frozen=True)
class _Shape:
    """The model-wide facts the mix rules look at (llama.cpp's hparams and model type)."""

    n_layer: int
    n_gqa: int  # n_head / n_head_kv, integer division as llama_hparams::n_gqa()
    n_expert: int
    is_70b: bool  # LLM_TYPE_70B: 80 layers with grouped-query attention (llama, qwen2)
    falcon: bool
    tied: bool
    imatrix: bool


def _shape(arch: Architecture, ftype: str, imatrix: bool | None) -> _Shape:
    family = str((arch.hf_config or {}).get("model_type", "")) + arch.source
    if imatrix is None:
        imatrix = ftype.startswith("IQ") or ftype == "Q2_K_S"
    return _Shape(
        # llama-quantize counts the tensors of a kind: an encoder-decoder has both stacks' blocks
        n_layer=arch.num_layers + arch.encoder_layers,
        n_gqa=arch.num_attention_heads // arch.num_kv_heads,
        n_expert=arch.num_experts or 0,
        is_70b=arch.num_layers == 80 and arch.num_kv_heads < arch.num_attention_heads
        and not arch.is_moe,
        falcon="falcon" in family.lower(),
        tied=arch.tied_embeddings,
        imatrix=imatrix,
    )


@cache  # a pure function of a short string, called once per tensor
def _category(name: str) -> str:
    """llama.cpp's tensor_get_category() for a GGUF base name (it matches substrings, so T5's
    cross_attn_v counts as attn_v, while its attn_o is no attn_output)."""
    name = name.removeprefix("cross_")
    if name in ("output", "token_embd"):
        return name
    if name == "per_layer_token_embd":  # tensor_name_match_token_embd() names both tables
        return "token_embd"
    if name in ("attn_qkv", "attn_kv_b", "attn_v", "attn_k", "attn_q", "attn_output"):
        return name
    for prefix in ("ffn_up", "ffn_gate", "ffn_down"):
        if name.startswith(prefix):
            return prefix
    return "other"


def _is_attn_v_like(cat: str) -> bool:
    return cat in ("attn_v", "attn_qkv", "attn_kv_b")


def _quantizable(t: TensorSpec) -> bool:
    """tensor_allows_quantization(): 2-D/3-D weights, not norms, router or conv weights."""
    return not t.is_vector and _quantizable_name(t.name)


@cache  # a pure function of a short string, called once per tensor of every layer
def _quantizable_name(name: str) -> bool:
    if name.endswith(("_norm", ".bias")):
        return False
    return not any(name.startswith(p) for p in _NOT_QUANTIZED)


def _use_more_bits(i: int, n: int) -> bool:
    """llama.cpp's use_more_bits(): first and last eighth, and every third layer between."""
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


def _output_type(ftype: str, t: TensorSpec, s: _Shape, default: str) -> str:
    """output.weight, and token_embd when it is tied to the output."""
    if ftype == "MXFP4_MOE" or s.falcon or t.n_cols % _block_size(default) != 0:
        return "Q8_0"
    if ftype in _IQ2_FAMILY or ftype == "IQ3_XXS":
        return "Q5_K"
    return default if default == "Q8_0" else "Q6_K"


def _token_embd_type(ftype: str, default: str) -> str:
    if ftype in ("IQ2_XXS", "IQ2_XS", "IQ1_S", "IQ1_M"):
        return "Q2_K"
    if ftype in ("IQ2_S", "IQ2_M", "IQ3_XXS"):
        return "IQ3_S"
    if ftype in ("TQ1_0", "TQ2_0"):
        return "Q4_K"
    return default


def _iq2_family_type(ftype: str, cat: str, t: TensorSpec, s: _Shape, i_down: int,
                     default: str) -> str:
    """The branch for IQ1_*/IQ2_* file types."""
    iq3 = ftype in ("IQ2_S", "IQ2_M")
    if _is_attn_v_like(cat):
        if s.n_gqa >= 4 or s.n_expert >= 4:
            return "Q4_K"
        return "IQ3_S" if iq3 else "Q2_K"
    if s.n_expert == 8 and cat == "attn_k":
        return "Q4_K"
    if cat == "ffn_down":
        return ("IQ3_S" if iq3 else "Q2_K") if i_down < s.n_layer // 8 else default
    if cat == "attn_output":
        if s.n_expert == 8:
            return "Q5_K"
        if ftype in ("IQ1_S", "IQ1_M"):
            return "IQ2_XXS"
        return "IQ3_S" if iq3 else default
    return default


def _attn_v_type(ftype: str, s: _Shape, i_wv: int, n_wv: int, default: str) -> str:
    """attn_v / attn_qkv / attn_kv_b: the tensors most sensitive to quantization."""
    t = default
    gqa4 = s.n_gqa >= 4
    if ftype == "Q2_K":
        t = "Q4_K" if gqa4 else "Q3_K"
    elif ftype == "Q2_K_S" and gqa4:
        t = "Q4_K"
    elif ftype == "IQ3_XXS":
        t = "Q4_K" if gqa4 else ("IQ3_XXS" if s.imatrix else "IQ3_S")
    elif ftype in ("IQ3_XS", "IQ3_S") and gqa4 or ftype == "IQ3_M":
        t = "Q4_K"
    elif ftype == "Q3_K_M":
        t = "Q5_K" if i_wv < 2 else "Q4_K"
    elif ftype == "Q3_K_L" or ftype in ("IQ4_NL", "IQ4_XS") and gqa4:
        t = "Q5_K"
    elif ftype in ("Q4_K_M", "Q5_K_M") and _use_more_bits(i_wv, n_wv):
        t = "Q6_K"
    elif ftype == "Q4_K_S" and i_wv < 4:
        t = "Q5_K"
    if s.is_70b and t in ("Q3_K", "Q4_K"):
        t = "Q5_K"
    return "Q8_0" if s.n_expert == 8 else t


def _ffn_down_type(ftype: str, s: _Shape, i: int, default: str) -> str:
    """ffn_down (dense, routed experts and shared experts alike), by layer index `i`."""
    n = s.n_layer
    if ftype == "Q2_K":
        return "Q3_K"
    if ftype == "Q2_K_S":
        return "Q4_K" if i < n // 8 else default
    if ftype == "IQ3_XXS" and not s.imatrix:
        return "Q4_K" if i < n // 8 else "Q3_K"
    if ftype == "Q3_K_M":
        if i < n // 16:
            return "Q5_K"
        return "Q4_K" if not s.falcon or _use_more_bits(i, n) else "Q3_K"
    if ftype == "IQ3_M" and (i < n // 8 or s.n_expert == 8 and _use_more_bits(i, n)):
        return "Q4_K"
    if ftype == "Q3_K_L":
        return "Q4_K" if s.falcon else "Q5_K"
    if ftype == "Q4_K_M":
        if s.falcon:
            return "Q6_K" if i < n // 16 else ("Q5_K" if _use_more_bits(i, n) else "Q4_K")
        return "Q6_K" if _use_more_bits(i, n) else default
    if ftype in ("IQ4_NL", "IQ4_XS") and i < n // 8 and not s.imatrix:
        return "Q5_K"
    if ftype == "Q5_K_M" and _use_more_bits(i, n):
        return "Q6_K"
    if ftype == "Q4_K_S" and not s.falcon and i < n // 8:
        return "Q5_K"
    if ftype in ("Q4_0", "Q5_0") and s.imatrix and i < n // 8:
        return "Q4_1" if ftype == "Q4_0" else "Q5_1"
    return default


_ATTN_OUTPUT_8X = frozenset({"Q2_K", "IQ3_XS", "IQ3_XXS", "Q3_K_S", "Q3_K_M", "IQ4_NL",
                             "Q4_K_S", "Q4_K_M", "IQ3_S", "IQ3_M", "IQ4_XS"})
_ATTN_OUTPUT = {"Q2_K": "Q3_K", "IQ3_XXS": "IQ3_S", "Q3_K_M": "Q4_K", "Q3_K_L": "Q5_K",
                "IQ3_M": "Q4_K"}


def _other_type(ftype: str, cat: str, t: TensorSpec, s: _Shape, default: str) -> str:
    """attn_k, attn_q, attn_output, attn_qkv, ffn_gate and ffn_up."""
    if cat == "attn_k":
        if s.n_expert == 8:
            return "Q8_0"
        return {"IQ3_XS": "IQ3_XXS", "IQ3_XXS": "IQ2_S"}.get(ftype, default)
    if cat == "attn_q":
        return {"IQ3_XS": "IQ3_XXS", "IQ3_XXS": "IQ2_S"}.get(ftype, default)
    if cat == "attn_output":
        if s.falcon:
            return "Q4_K" if ftype == "Q3_K_L" else default
        if s.n_expert == 8:
            return "Q5_K" if ftype in _ATTN_OUTPUT_8X else default
        return _ATTN_OUTPUT.get(ftype, default)
    if cat == "attn_qkv":
        if ftype in ("Q3_K_M", "Q3_K_L", "IQ3_M"):
            return "Q4_K"
        return {"Q4_K_M": "Q5_K", "Q5_K_M": "Q6_K"}.get(ftype, default)
    if cat in ("ffn_gate", "ffn_up") and ftype == "IQ3_XS" and t.layer is not None:
        n = s.n_layer
        if n // 8 <= t.layer < 7 * n // 8:
            return "IQ3_XXS"
    return default


def _fallback(t: TensorSpec, ggml_type: str) -> str:
    """tensor_type_fallback(): a row length the block size does not divide."""
    if t.n_cols % _block_size(ggml_type) == 0:
        return ggml_type
    alt = _FALLBACK.get(ggml_type, "F16")
    return alt if t.n_cols % _block_size(alt) == 0 else "F16"


def _mixed_type(ftype: str, t: TensorSpec, s: _Shape, i_wv: int, n_wv: int) -> str:
    """The quantized type of one quantizable tensor (ftype is a quantized file type)."""
    default = FTYPE_DEFAULT_TYPE[ftype]
    cat = _category(t.name)
    if cat == "output" or (cat == "token_embd" and s.tied):
        chosen = _output_type(ftype, t, s, default)
    elif ftype == "MXFP4_MOE":
        chosen = "MXFP4" if t.n_experts > 1 else "Q8_0"
    elif cat == "token_embd":
        chosen = _token_embd_type(ftype, default)
    elif ftype in _IQ2_FAMILY:
        chosen = _iq2_family_type(ftype, cat, t, s, t.layer or 0, default)
    elif _is_attn_v_like(cat):
        chosen = _attn_v_type(ftype, s, i_wv, n_wv, default)
    elif cat == "ffn_down":
        chosen = _ffn_down_type(ftype, s, t.layer or 0, default)
    else:
        chosen = _other_type(ftype, cat, t, s, default)
    return _fallback(t, chosen)


def _tensor_type(ftype: str, t: TensorSpec, s: _Shape, i_wv: int, n_wv: int) -> str:
    if not _quantizable(t):
        return "F32" if t.is_vector or t.name.startswith("ffn_gate_inp") else "F16"
    default = FTYPE_DEFAULT_TYPE[ftype]
    if default in UNQUANTIZED:
        return default
    return _mixed_type(ftype, t, s, i_wv, n_wv)


def _typed_tensors(arch: Architecture, ftype: str,
                   imatrix: bool | None) -> Iterator[tuple[TensorSpec, str]]:
    """Every tensor with its ggml type; counts attn_v-like tensors as llama.cpp does."""
    ftype = canonical_ftype(ftype)
    s = _shape(arch, ftype, imatrix)
    inventory = tensor_inventory(arch)
    n_wv = sum(1 for t in inventory if _is_attn_v_like(_category(t.name)) and not t.is_vector)
    i_wv = 0
    for t in inventory:
        yield t, _tensor_type(ftype, t, s, i_wv, n_wv)
        if _is_attn_v_like(_category(t.name)) and not t.is_vector:
            i_wv += 1


def tensor_ggml_type(ftype: str, tensor: TensorSpec, arch: Architecture,
                     imatrix: bool | None = None) -> str:
    """The ggml type llama-quantize gives `tensor` of `arch` in file type `ftype` ("Q6_K", ...)."""
    for t, ggml_type in _typed_tensors(arch, ftype, imatrix):
        if t == tensor:
            return ggml_type
    raise ValueError(f"tensor {tensor.name} (layer {tensor.layer}) is not in this architecture")


def tensor_bytes(t: TensorSpec, ggml_type: str) -> float:
    """Bytes of one tensor stored as `ggml_type`."""
    return ggml_type_bytes(ggml_type, t.n_elements)


def weights_bytes(arch: Architecture, ftype: str, imatrix: bool | None = None) -> int:
    """Bytes of every weight tensor of `arch` at llama.cpp file type `ftype`.

    This is the size llama-bench prints.
    """
    return round(sum(tensor_bytes(t, g) for t, g in _typed_tensors(arch, ftype, imatrix)))


def resident_weights_bytes(arch: Architecture, ftype: str, imatrix: bool | None = None) -> int:
    """`weights_bytes` less the tensors llama.cpp reads row by row from the mapped file
    (`tensors.LAZY_TENSORS`): the weights a runtime holds in memory, VRAM or RAM."""
    return round(sum(tensor_bytes(t, g) for t, g in _typed_tensors(arch, ftype, imatrix)
                     if t.name not in LAZY_TENSORS))


def weights_read_per_token_bytes(arch: Architecture, ftype: str,
                                 imatrix: bool | None = None) -> float:
    """Weight bytes one decode step reads: active experts only, one embedding row (≈ 0)."""
    return sum(tensor_bytes(t, g) * active_fraction(arch, t)
               for t, g in _typed_tensors(arch, ftype, imatrix))


def read_per_token_by_type(arch: Architecture, ftype: str, imatrix: bool | None = None,
                           ) -> dict[tuple[str, bool], float]:
    """weights_read_per_token_bytes by (ggml type, routed-expert tensor): what a backend whose
    kernels differ per type and per operation (MUL_MAT vs MUL_MAT_ID) reads in each, B."""
    out: dict[tuple[str, bool], float] = {}
    for t, g in _typed_tensors(arch, ftype, imatrix):
        key = (g, t.n_experts > 1)
        out[key] = out.get(key, 0.0) + tensor_bytes(t, g) * active_fraction(arch, t)
    return out


def type_histogram(arch: Architecture, ftype: str,
                   imatrix: bool | None = None) -> dict[str, float]:
    """Bytes per ggml type in the mix (what `llama-quantize` would report), for explanations."""
    out: dict[str, float] = {}
    for t, g in _typed_tensors(arch, ftype, imatrix):
        out[g] = out.get(g, 0.0) + tensor_bytes(t, g)
    return out


def average_bits_per_weight(arch: Architecture, ftype: str,
                            imatrix: bool | None = None) -> float:
    """Average bits per weight of the whole mix (8 × bytes / parameters)."""
    n = sum(t.n_elements for t in tensor_inventory(arch))
    return 8.0 * weights_bytes(arch, ftype, imatrix) / n


def approx_weights_bytes(parameters: float, ftype: str | Quantization) -> float:
    """Bytes of a model known only by its parameter count: parameters × the type's average bits / 8.

    The average bits come from `catalog/data/quants.json` (the mix averaged over LLaMA 3 8B);
    the caller flags the result as approximated.
    """
    if isinstance(ftype, str):
        from tpscalc.catalog.quants import get_quant  # the one catalog read, lazily

        ftype = get_quant(ftype)
    return parameters * ftype.bits_per_weight / 8.0


def role_bytes(arch: Architecture, ftype: str) -> dict[str, float]:
    """Stored bytes of what llama.cpp places apart from the repeating layers: "embedding"
    (token_embd), "output" (the output head and the tensors outside the layers) and "experts"
    (the ffn_*_exps tensors of all layers). The layers' own total is the model's total less the
    first two; the other layer tensors are not typed here (a dense model types 2-3 tensors)."""
    ftype = canonical_ftype(ftype)
    s = _shape(arch, ftype, None)
    out = {"embedding": 0.0, "output": 0.0, "experts": 0.0}
    for role, t in _placed_apart(arch):
        # no attn_v-like tensor is typed here, so their running count (i_wv) does not matter
        out[role] += tensor_bytes(t, _tensor_type(ftype, t, s, 0, 1))
    return out


@lru_cache(maxsize=4096)
def _placed_apart(arch: Architecture) -> tuple[tuple[str, TensorSpec], ...]:
    """The tensors role_bytes types, with their role, in the inventory's order. Kept per
    model: a rig report asks each model's roles at several formats, one format for every model
    at a time, and the whole inventory is kept for the last few models only."""
    out = []
    for t in tensor_inventory(arch):
        if t.name in LAZY_TENSORS:  # neither held nor placed: read from the mapped file
            continue
        if t.layer is None:
            out.append(("embedding" if t.name == "token_embd" else "output", t))
        elif t.name.endswith("_exps"):
            out.append(("experts", t))
    return tuple(out)
