"""What every estimate gets after its speeds, one device or many: the unseen-family band for a
model whose shape is guessed, the held measurements of the very card, model and format, and a
runtime's speed level."""
from __future__ import annotations

from tpscalc.estimate.calibration import Calibration, lookup_measured, measured_key
from tpscalc.estimate.novelty import on_slowest, widened
from tpscalc.estimate.runtime import RuntimeLevel
from tpscalc.estimate.types import Confidence, DecodeEstimate, Measured, PrefillEstimate, SpeedTest


def low_confidence(d: DecodeEstimate, cal: Calibration) -> DecodeEstimate:
    """`d` with the unseen-family (low-confidence) band: for models whose shape is guessed. The
    range holds both (novelty.widened): a range already wider than the band (a condition's, a
    device class's) stays, since a guess about the model knows no more about the card."""
    band = cal.decode_bands.get("low")
    if band is None or d.confidence == "low":
        return d
    low, high = widened(d.tokens_per_s, d.low, d.high, on_slowest(band, d.slowest_ratio))
    return DecodeEstimate(d.tokens_per_s, low, high, "low", d.bound, None, d.slowest_ratio)


def held_measured(cal: Calibration, card: str, model: str, quant: str, backend: str
                  ) -> Measured | None:
    """The held decode and prompt measurements of this card, model and quant (empty cache:
    never shown beside a test at depth)."""
    dec = lookup_measured(cal, card, model, quant, backend)
    pre = lookup_measured(cal, card, model, quant, backend, kind="prefill")
    if dec is None and pre is None:
        return None
    held = dec if dec is not None else pre
    return Measured(dec.tokens_per_s if dec else None, pre.tokens_per_s if pre else None,
                    dec.test if dec else None, pre.test if pre else None,
                    held.source if held is not None else "")


def with_measured(d: DecodeEstimate, cal: Calibration, card: str, model: str, quant: str,
                  backend: str, test: SpeedTest) -> tuple[DecodeEstimate, Measured | None]:
    """`d` with the measured decode speed beside it, and the held measurements (None at a
    depth), when the calibration holds rows of `card` (a rig's name: several cards hold none),
    `model` and `quant`."""
    if not cal.measured.get(measured_key(card, model, quant)):  # few rows have any
        return d, None
    measured = lookup_measured(cal, card, model, quant, backend)
    if measured is not None:
        d = DecodeEstimate(d.tokens_per_s, d.low, d.high, d.confidence, d.bound,
                           measured.tokens_per_s, d.slowest_ratio)
    return d, None if test.depth else held_measured(cal, card, model, quant, backend)


def at_level(d: DecodeEstimate, level: RuntimeLevel) -> DecodeEstimate:
    """`d` (llama.cpp's estimate for the work) at a runtime's level: the speed × its factor, the
    range the wider of llama.cpp's band scaled and the runtime's own; the confidence at most
    medium, low where the level rests on fewer than 30 public rows."""
    tps = d.tokens_per_s * level.decode
    low = min(d.low * level.decode, d.tokens_per_s * level.low)
    high = max(d.high * level.decode, d.tokens_per_s * level.high)
    confidence: Confidence = "low" if level.rows < 30 or d.confidence == "low" else "medium"
    return DecodeEstimate(tps, low, high, confidence, d.bound)


def prefill_at_level(p: PrefillEstimate | None, level: RuntimeLevel) -> PrefillEstimate | None:
    """`p` at a runtime's prompt level (the time to the first token stretched alike)."""
    if p is None:
        return None
    tps = p.tokens_per_s * level.prefill
    low = min(p.low * level.prefill, p.tokens_per_s * level.low)
    high = max(p.high * level.prefill, p.tokens_per_s * level.high)
    return PrefillEstimate(tps, low, high, p.time_to_first_token_s / level.prefill, p.bound)
