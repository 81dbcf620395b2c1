"""How far a model is from what the speed calibration measured, and the range that follows.

A prediction for a model the measurements hold (on other cards) is the leave-one-device-out
situation, and takes the calibration's bands as fitted. A model of a layer kind that was
measured but not the model itself (Llama 3.1-8B: dense, full attention, like the measured
Llama 3-8B) is the leave-one-model-out situation; a layer kind never measured (multi-head latent
attention, linear-attention or Mamba hybrids) the leave-one-architecture-out one. The layer kind
(`kind_of`) is what the speed model's terms depend on: MoE or dense, and the attention (full,
sliding window, latent, linear/recurrent). Each
situation has its own bands, fitted by tools/calibrate.py from cross-validations that hold out
a model, or a family, at a time (band keys "family-out|<level>" and "novel|<level>", and
"...|moe" for a MoE's prompts, the level being the device's confidence); a range is never
narrower than the measured situation's, and the confidence label drops a level with each step
away ("high" -> "medium" -> "low").
"""
from __future__ import annotations

import re
from typing import Literal, cast

from tpscalc.catalog.schema import Architecture, Model
from tpscalc.estimate.calibration import LEVELS, Band, Calibration
from tpscalc.estimate.elementwise import Num, where
from tpscalc.estimate.types import Confidence, DecodeEstimate, PrefillEstimate

Tier = Literal["measured", "family", "novel"]
# The band-key prefix of each tier beyond "measured" (tools/calibrate.py writes them).
TIER_PREFIX: dict[Tier, str] = {"family": "family-out", "novel": "novel"}
# A model family is its name without the size: "Llama 2-13B" -> "Llama 2", "Gemma 3 4B" ->
# "Gemma 3", "gpt-oss-120b" -> "gpt-oss", "Qwen3-30B-A3B" -> "Qwen3".
_SIZE = re.compile(r"^(.+?)[- ]\d+(?:\.\d+)?[bBmM]\b")


def family_of(model_name: str) -> str:
    """The family a model's name belongs to (its name without the size)."""
    m = _SIZE.match(model_name)
    return m.group(1) if m else model_name


def kind_of(arch: Architecture | None) -> str | None:
    """The layer kind the speed terms depend on: "moe" or "dense", and the attention ("full",
    "swa" for sliding-window layers, "mla" for latent attention, "linear" for linear-attention
    or state-space layers); None for a model without an architecture."""
    if arch is None:
        return None
    ffn = "moe" if arch.num_experts else "dense"
    if arch.linear_attention_layers or (arch.layer_mixers and set(arch.layer_mixers) - {"A"}):
        attention = "linear"
    elif arch.kv_lora_rank:
        attention = "mla"
    elif arch.sliding_window_layers or arch.sliding_window:
        attention = "swa"
    else:
        attention = "full"
    return f"{ffn}|{attention}"


# id(model) -> (model, measured, kinds, its tier): a report asks the tier of one model on every
# card; the objects are kept so an id is never reused. Emptied when full.
_TIERS: dict[int, tuple[Model, object, object, Tier]] = {}
TIERS_MEMO_SIZE = 4096


def _model_tier(model: Model, cal: Calibration) -> Tier:
    """tier_of(model, cal's measured models and kinds), memoised."""
    held = _TIERS.get(id(model))
    if held is not None and held[0] is model and held[1] is cal.measured_models \
            and held[2] is cal.measured_kinds:
        return held[3]
    tier = tier_of(model, cal.measured_models, cal.measured_kinds)
    if len(_TIERS) >= TIERS_MEMO_SIZE:
        _TIERS.clear()
    _TIERS[id(model)] = (model, cal.measured_models, cal.measured_kinds, tier)
    return tier


def tier_of(model: Model | str, measured: frozenset[str] | tuple[str, ...],
            kinds: frozenset[str] | tuple[str, ...] = ()) -> Tier:
    """"measured" if the model's own rows were fitted, "family" if a model of its layer kind
    was (`kinds`: the measured models' kinds, `Calibration.measured_kinds`), else "novel"; a
    name alone is compared by family name."""
    name = model if isinstance(model, str) else model.name
    if name in measured:
        return "measured"
    if isinstance(model, str):
        family = family_of(model)
        return "family" if any(family_of(m) == family for m in measured) else "novel"
    kind = kind_of(model.architecture)
    return "family" if kind is not None and kind in kinds else "novel"


def lower_confidence(level: str, tier: Tier) -> str:
    """The confidence label one level lower per step away from the measurements."""
    i = LEVELS.index(level) if level in LEVELS else len(LEVELS) - 1
    return LEVELS[min(i + _STEPS[tier], len(LEVELS) - 1)]


_STEPS: dict[Tier, int] = {"measured": 0, "family": 1, "novel": 2}


def tier_band(bands: dict[str, Band], level: str, tier: Tier, moe_prompt: bool = False,
              ) -> Band | None:
    """The band fitted for a prediction at confidence `level` (the device's) `tier` steps from
    the measurements (a MoE's prompt: the tier's MoE pool); None for "measured" or unfitted."""
    if tier == "measured":
        return None
    key = f"{TIER_PREFIX[tier]}|{level}"
    return bands.get(f"{key}|moe") if moe_prompt else bands.get(key)


# Band key of the predictions whose driver was never measured: tools/calibrate.py fits it on
# every row predicted with its vendor's driver under its backend held out ("vulkan:amd",
# "metal:apple": a single-vendor backend goes out whole).
DRIVER_OUT = "driver-out"


def driver_band(bands: dict[str, Band], band: Band, driver_measured: bool) -> Band:
    """`band`, widened for an unmeasured driver to hold the DRIVER_OUT band of `bands` too (an
    η pooled over other drivers misses by what those drivers differ, not by a measured
    device's scatter)."""
    wide = None if driver_measured else bands.get(DRIVER_OUT)
    return band if wide is None else union(band, wide)


def union(band: Band, other: Band) -> Band:
    """The band holding both `band` and `other` (`band`'s row count)."""
    return Band(min(band.low_ratio, other.low_ratio), max(band.high_ratio, other.high_ratio),
                band.n)


def widened(tokens_per_s: float, low: float, high: float, band: Band | None,
            ) -> tuple[float, float]:
    """(low, high) holding both the range given and `band` about `tokens_per_s`."""
    if band is None:
        return low, high
    lo: float
    hi: float
    lo, hi = widened_by(tokens_per_s, low, high, band.low_ratio, band.high_ratio)
    return lo, hi


def widened_by(tokens_per_s: Num, low: Num, high: Num, low_ratio: Num, high_ratio: Num,
               ) -> tuple[Num, Num]:
    """widened's (low, high) with the band's ratios, on floats or columns of rows
    (elementwise.py): min(low, …) and max(high, …), the first of equals as min and max."""
    slow, fast = tokens_per_s * low_ratio, tokens_per_s * high_ratio
    return where(slow < low, slow, low), where(fast > high, fast, high)


def on_slowest(band: Band | None, slowest_ratio: float) -> Band | None:
    """`band` with its low end on a decode's slowest-kernels estimate (`slowest_ratio`, its
    DecodeEstimate.slowest_ratio: a SYCL decode on an Intel GPU may run every unreordered type
    at its slowest), as the measured situation's band is (speed.decode_figures)."""
    if band is None or slowest_ratio == 1.0:
        return band
    return Band(band.low_ratio * slowest_ratio, band.high_ratio, band.n)


def model_tier(model: Model | str, cal: Calibration) -> Tier:
    """The tier of `model` under `cal` (every model "measured" when it names none)."""
    if not cal.measured_models:
        return "measured"
    return (tier_of(model, cal.measured_models) if isinstance(model, str)
            else _model_tier(model, cal))


def with_novelty(d: DecodeEstimate, p: PrefillEstimate | None, cal: Calibration,
                 model: Model | str, prefill_level: str, moe: bool,
                 ) -> tuple[DecodeEstimate, PrefillEstimate | None]:
    """A model's decode and prompt estimates with the ranges and label of its tier (the decode
    band keyed by the device's decode confidence, the prompt band by its prefill confidence)."""
    tier = model_tier(model, cal)
    if tier == "measured" or d.measured is not None:
        return d, p
    lo, hi = widened(d.tokens_per_s, d.low, d.high,
                     on_slowest(tier_band(cal.decode_bands, d.confidence, tier), d.slowest_ratio))
    # built directly, not with dataclasses.replace (~5 µs each: a rig report makes ~850)
    d = DecodeEstimate(d.tokens_per_s, lo, hi,
                       cast(Confidence, lower_confidence(d.confidence, tier)), d.bound, None,
                       d.slowest_ratio)
    if p is not None:
        band = tier_band(cal.prefill_bands, prefill_level, tier, moe)
        lo, hi = widened(p.tokens_per_s, p.low, p.high, band)
        p = PrefillEstimate(p.tokens_per_s, lo, hi, p.time_to_first_token_s, p.bound)
    return d, p
