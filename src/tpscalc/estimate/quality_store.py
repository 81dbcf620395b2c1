"""Load the committed quality fit (catalog/data/quality.json, written by tools/fit_quality.py)
once, on first use, and give a catalog model's quality at each quantization."""
from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from tpscalc.catalog.store import read_json
from tpscalc.estimate.quality import Quality, QualityFit, estimate_quality, from_dict

if TYPE_CHECKING:
    from tpscalc.catalog.schema import Model

QUALITY_FILE = "quality.json"


@cache
def quality_fit() -> QualityFit:
    """The fitted quality coefficients and their leave-one-model-out error."""
    return from_dict(read_json(QUALITY_FILE))


def bits_per_weight(quant: str) -> float | None:
    """The catalog's average bits a weight of a llama.cpp file type (None: unknown type)."""
    from tpscalc.catalog.quants import UnknownQuantizationError, get_quant

    try:
        return get_quant(quant).bits_per_weight
    except UnknownQuantizationError:
        return None


def model_quality(model: Model, quant: str) -> Quality | None:
    """`model`'s quality at `quant` (None: a file type the catalog cannot size)."""
    bpw = bits_per_weight(quant)
    if bpw is None:
        return None
    native = model.native_format
    native_bpw = bits_per_weight(native) if native else None
    moe = bool(model.architecture is not None and model.architecture.is_moe)
    return estimate_quality(quality_fit(), quant, bpw, model.parameters / 1e9, moe=moe,
                            native_bpw=native_bpw)
