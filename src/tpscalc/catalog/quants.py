"""The quantizations the product offers (the quality ladder) and the other llama.cpp file types.

Data: `catalog/data/quants.json` (validated by `schema.Quantization`), loaded on first use.
Names resolve the way people and tools write them: "Q4_K_M", "q4_k_m", "q4km", llama-bench's
"Q4_K - Medium", llama-quantize's alias "Q4_K", "MXFP4 MoE".
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

from tpscalc.catalog.lookup import NameNotFoundError
from tpscalc.catalog.schema import Quantization
from tpscalc.catalog.store import CatalogError, compact_quants, read_json

FILENAME = "quants.json"
# llama-quantize's aliases (QUANT_OPTIONS in llama.cpp tools/quantize/quantize.cpp).
_ALIASES = {"Q4K": "Q4_K_M", "Q5K": "Q5_K_M", "Q3K": "Q3_K_M", "MXFP4": "MXFP4_MOE",
            "FP16": "F16", "FLOAT16": "F16", "BFLOAT16": "BF16"}
# llama.cpp's llama_model_ftype_name() spells K-quant mixes "Q4_K - Medium";
# Q2_K is "Q2_K - Medium".
_SIZE_WORDS = {"SMALL": "S", "MEDIUM": "M", "LARGE": "L"}


class UnknownQuantizationError(NameNotFoundError):
    """A quantization name matched nothing; the message lists the closest valid names."""


def _compact(name: str) -> str:
    return re.sub(r"[^A-Z0-9]", "", name.upper())


def _from_llama_label(name: str) -> str:
    """'Q4_K - Medium' → 'Q4_K_M'; 'IQ3_XXS - 3.0625 bpw' → 'IQ3_XXS'; others unchanged."""
    label = name.strip().upper()
    label = re.sub(r"\s*-\s*[0-9.]+\s*BPW$", "", label)
    m = re.fullmatch(r"(Q\d_K)\s*-\s*(SMALL|MEDIUM|LARGE)", label)
    if m:
        if m.group(1) == "Q2_K":
            return "Q2_K" if m.group(2) == "MEDIUM" else "Q2_K_S"
        return f"{m.group(1)}_{_SIZE_WORDS[m.group(2)]}"
    return label


def _load(key: str) -> tuple[Quantization, ...]:
    compact = compact_quants(key)  # pre-validated, in zz_catalog.pickle
    return compact if compact is not None else validated(key)


def validated(key: str) -> tuple[Quantization, ...]:
    """The quantizations of quants.json's `key` ("ladder" or "extra"), validated."""
    from tpscalc.catalog.validate import ValidationError

    rows = read_json(FILENAME)[key]
    out = []
    for i, row in enumerate(rows):
        try:
            out.append(Quantization.model_validate(row))
        except ValidationError as exc:
            raise CatalogError(f"{FILENAME} {key}[{i}] ({row.get('name', '?')}): {exc}") from exc
    return tuple(out)


@cache
def quantizations() -> tuple[Quantization, ...]:
    """The ladder the product offers, least compressed first (quality_rank 0, 1, 2, ...)."""
    ladder = _load("ladder")
    if [q.quality_rank for q in ladder] != list(range(len(ladder))):
        raise CatalogError(f"{FILENAME}: ladder quality_rank must be 0, 1, 2, ... in order")
    return ladder


@cache
def all_quantizations() -> tuple[Quantization, ...]:
    """The ladder, then the other file types the engine can size (F16, Q4_0, MXFP4_MOE, ...)."""
    return quantizations() + _load("extra")


@cache
def _by_compact() -> dict[str, Quantization]:
    return {_compact(q.name): q for q in all_quantizations()}


@cache
def _by_name() -> dict[str, Quantization]:
    """Each quantization's own name → what `get_quant` resolves it to (a card report asks
    for the same dozen names ~4,000 times)."""
    return {q.name: _resolve(q.name) for q in all_quantizations()}


def get_quant(name: str) -> Quantization:
    """The quantization `name` designates ("q4_k_m", "Q4_K_M", "q4km", "Q4_K - Medium")."""
    found = _by_name().get(name)
    return found if found is not None else _resolve(name)


def _resolve(name: str) -> Quantization:
    table = _by_compact()
    key = _compact(_from_llama_label(name))
    key = _compact(_ALIASES.get(key, key))
    if key in table:
        return table[key]
    names = {k: q.name for k, q in table.items()}
    from difflib import get_close_matches  # on an unknown name only

    suggestions = [names[k] for k in get_close_matches(key, list(names), n=4, cutoff=0.4)]
    hint = f"; closest: {', '.join(suggestions)}" if suggestions else ""
    valid = ", ".join(q.name for q in quantizations())
    raise UnknownQuantizationError(
        f"unknown quantization {name!r}{hint} (the ladder: {valid}){_mix_hint(name)}",
        suggestions)


# A file maker's own mix (Unsloth's UD-Q4_K_XL, bartowski's Q4_K_L): its types per tensor
# differ from llama.cpp's file type of the same stem, and from one model to the next.
_OWN_MIX = re.compile(r"(?i)^ud[-_]|_(xl|l)$")


def _mix_hint(name: str) -> str:
    """A pointer to the file reader for a name that is a file maker's own mix."""
    if not _OWN_MIX.search(name.strip()):
        return ""
    return ("; a file maker's own mix (Unsloth's UD-*, *_XL, *_L) keeps other types per tensor "
            "than llama.cpp's file type and differs by model: the file itself or its Hugging "
            "Face repository (the CLI's --gguf / --hf) is estimated from its tensors")


def ladder_index(name: str) -> int:
    """Position of a quantization on the quality floor scale (its quality_rank)."""
    return get_quant(name).quality_rank


def is_on_ladder(name: str) -> bool:
    """True when the product offers this quantization in its tables."""
    return get_quant(name).name in ladder_names()


def ladder_names() -> list[str]:
    """Names of the quantizations on the ladder, least compressed first."""
    return [q.name for q in quantizations()]


def ladder_name(name: str, ladder: Sequence[str] | None = None) -> str:
    """The canonical spelling of `name` if it is on `ladder`, else an error.

    `ladder` defaults to the product's.
    """
    canonical = get_quant(name).name  # UnknownQuantizationError lists the closest names
    names = list(ladder) if ladder is not None else ladder_names()
    if canonical in names:
        return canonical
    from difflib import get_close_matches  # on an unknown name only

    close = get_close_matches(canonical, names, n=4, cutoff=0.3)
    hint = f"closest: {', '.join(close)}" if close else f"use one of {', '.join(names)}"
    raise UnknownQuantizationError(f"quantization {name!r} is not on the ladder; {hint}", close)
