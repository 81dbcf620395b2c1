"""speed.decode_estimates and speed.prefill_estimates over numpy columns of many rows.

A rig report asks ~1,750 device rows (each placed row's devices, each its share of the model's
terms). Here each card's own terms (speed.card_terms) are gathered once per card, and the rows
are evaluated by speed's own formulas (decode_figures, prefill_times, prefill_rate) over
columns: the same operations in the same order as the row-by-row functions, so the same
floats (elementwise.py). The answers stay columns; a row's estimate is made when it is read.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tpscalc.catalog.schema import Card
from tpscalc.estimate import speed
from tpscalc.estimate.calibration import Calibration
from tpscalc.estimate.speed import DECODE_BOUNDS, CardTerms
from tpscalc.estimate.speed_terms import moe_tile_flops_per_token
from tpscalc.estimate.types import Bound, Confidence, DecodeEstimate, PrefillEstimate

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class DecodeColumns:
    """decode_estimates' answers as columns: tokens/s, its range, each row's confidence and
    bound (an index of speed.DECODE_BOUNDS)."""

    tokens_per_s: Floats
    low: Floats
    high: Floats
    confidence: list[Confidence]
    bound: Ints

    def bound_of(self, i: int) -> Bound:
        """Row i's bound."""
        return DECODE_BOUNDS[int(self.bound[i])]

    def estimate(self, i: int) -> DecodeEstimate:
        """Row i's DecodeEstimate."""
        return DecodeEstimate(float(self.tokens_per_s[i]), float(self.low[i]),
                              float(self.high[i]), self.confidence[i], self.bound_of(i))


@dataclass(frozen=True)
class PrefillColumns:
    """prefill_estimates' answers as columns: whether the card's rate is known (else the row
    is None), tokens/s, its range, seconds, and whether compute bounds it."""

    known: Bools
    tokens_per_s: Floats
    low: Floats
    high: Floats
    seconds: Floats
    by_compute: Bools

    def bound_of(self, i: int) -> Bound:
        """Row i's bound."""
        return "compute" if self.by_compute[i] else "bandwidth"

    def estimate(self, i: int) -> PrefillEstimate | None:
        """Row i's PrefillEstimate (None where the card's rate is unknown)."""
        if not self.known[i]:
            return None
        return PrefillEstimate(float(self.tokens_per_s[i]), float(self.low[i]),
                               float(self.high[i]), float(self.seconds[i]), self.bound_of(i))


def _cards(cards: Sequence[Card], backend: str | None, cal: Calibration
           ) -> tuple[list[CardTerms], Ints]:
    """The distinct cards' terms, and each row's index into them."""
    seen: dict[int, int] = {}
    index = [seen.setdefault(id(c), len(seen)) for c in cards]
    firsts: dict[int, Card] = {}
    for c in cards:
        firsts.setdefault(id(c), c)
    return ([speed.card_terms(c, backend, cal) for c in firsts.values()],
            np.array(index, dtype=np.int64))


def _per_card(at: Ints, value: list[float]) -> Floats:
    """One value per distinct card, as a column of the rows."""
    return np.array(value, dtype=np.float64)[at]


def decode_columns(read_bytes_per_token: Floats, kv_bytes_at_context: Floats,
                   n_layers: Floats, cards: Sequence[Card], backend: str | None,
                   cal: Calibration, is_moe: Bools, params_read: Floats, quant: Sequence[str],
                   attention_flops: Floats) -> DecodeColumns:
    """speed.decode_estimates of every row (a column each, one entry per row), as columns."""
    terms, at = _cards(cards, backend, cal)
    params = [k.params for k in terms]
    work = {(j, q): terms[j].dequant_work(q) for j, q in set(zip(at.tolist(), quant,
                                                                  strict=True))}
    c_q_col = np.array([work[key] for key in zip(at.tolist(), quant, strict=True)],
                       dtype=np.float64)
    with np.errstate(all="ignore"):
        tps, low, high, bound = speed.decode_figures(
            read_bytes_per_token, kv_bytes_at_context, n_layers,
            _per_card(at, [k.card.bandwidth_gb_s for k in terms]),
            _per_card(at, [p.decode_efficiency for p in params]),
            _per_card(at, [p.per_token_us for p in params]),
            _per_card(at, [p.per_layer_us for p in params]),
            np.where(is_moe, _per_card(at, [p.moe_factor for p in params]), 1.0),
            c_q_col, params_read, cal.attention_decode_factor, attention_flops,
            _per_card(at, [k.shader for k in terms]),
            _per_card(at, [k.decode_band.low_ratio for k in terms]),
            _per_card(at, [k.decode_band.high_ratio for k in terms]))
    confidence = [p.decode_confidence for p in params]
    return DecodeColumns(tps, low, high, [confidence[j] for j in at.tolist()],
                         np.asarray(bound, dtype=np.int64))


def prefill_columns(flops_per_token: Floats, prompt_tokens: int, cards: Sequence[Card],
                    backend: str | None, cal: Calibration, weights_bytes: Floats,
                    quantized: Sequence[bool], ubatch: int, attention_flops_per_token: Floats,
                    expert_params: Floats, expert_batch: Floats, expert_gemms: Floats,
                    flash_attn: bool, bf16: Sequence[bool]) -> PrefillColumns:
    """speed.prefill_estimates of every row (int8_mmq: current builds), as columns."""
    terms, at = _cards(cards, backend, cal)
    tiles = [k.moe_tile(min(prompt_tokens, ubatch)) for k in terms]
    kinds: dict[tuple[int, bool, bool], tuple[float, float, float]] = {}
    for j, quant, half in set(zip(at.tolist(), quantized, bf16, strict=True)):
        kinds[(j, quant, half)] = (*terms[j].prompt_rate(quant, half, True),
                                   speed.prefill_efficiency(terms[j].params, quant, flash_attn))
    rows = np.array([kinds[key] for key in zip(at.tolist(), quantized, bf16, strict=True)],
                    dtype=np.float64).reshape(-1, 3)
    extra: dict[tuple[float, float, int], float] = {}
    for key in set(zip(expert_params.tolist(), expert_batch.tolist(),
                       [tiles[j] for j in at.tolist()], strict=True)):
        extra[key] = moe_tile_flops_per_token(*key)
    moe_extra = np.array([extra[key] for key in zip(
        expert_params.tolist(), expert_batch.tolist(), [tiles[j] for j in at.tolist()],
        strict=True)], dtype=np.float64)
    params = [k.params for k in terms]
    moe = expert_params > 0

    def band(ratio: str) -> Floats:
        return np.where(moe, _per_card(at, [getattr(k.prefill_bands[True], ratio)
                                                    for k in terms]),
                        _per_card(at, [getattr(k.prefill_bands[False], ratio)
                                              for k in terms]))

    with np.errstate(all="ignore"):
        compute, floor = speed.prefill_times(
            prompt_tokens, flops_per_token, attention_flops_per_token, moe_extra, rows[:, 1],
            _per_card(at, [p.prefill_attention_efficiency for p in params]),
            rows[:, 0], rows[:, 2], weights_bytes,
            _per_card(at, [k.card.bandwidth_gb_s for k in terms]),
            _per_card(at, [p.decode_efficiency for p in params]), ubatch,
            expert_gemms, cal.moe_expert_gemm_us)
        tps, low, high, seconds, by_compute = speed.prefill_rate(
            prompt_tokens, compute, floor, band("low_ratio"), band("high_ratio"))
    return PrefillColumns(np.isfinite(compute) & np.isfinite(floor), tps, low, high, seconds,
                          by_compute)
