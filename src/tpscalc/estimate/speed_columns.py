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


# A decode row's DecodeEstimate fields: tokens/s, low, high, confidence, bound, slowest ratio.
DecodeFigures = tuple[float, float, float, Confidence, Bound, float]


@dataclass(frozen=True)
class DecodeColumns:
    """decode_estimates' answers as columns: tokens/s, its range, each row's confidence and
    bound (an index of speed.DECODE_BOUNDS), and DecodeEstimate.slowest_ratio."""

    tokens_per_s: Floats
    low: Floats
    high: Floats
    confidence: list[Confidence]
    bound: Ints
    slowest_ratio: Floats

    def bound_of(self, i: int) -> Bound:
        """Row i's bound."""
        return DECODE_BOUNDS[int(self.bound[i])]

    def figures(self, i: int) -> DecodeFigures:
        """Row i's DecodeEstimate fields (tokens/s, low, high, confidence, bound, slowest
        ratio; no measurement)."""
        return (float(self.tokens_per_s[i]), float(self.low[i]), float(self.high[i]),
                self.confidence[i], self.bound_of(i), float(self.slowest_ratio[i]))

    def estimate(self, i: int) -> DecodeEstimate:
        """Row i's DecodeEstimate."""
        return decode_estimate(self.figures(i))


def decode_estimate(figures: DecodeFigures) -> DecodeEstimate:
    """The DecodeEstimate of DecodeColumns.figures' fields (no measurement: with_measured adds
    it)."""
    tps, low, high, confidence, bound, slowest = figures
    return DecodeEstimate(tps, low, high, confidence, bound, None, slowest)


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

    def figures(self, i: int) -> tuple[float, float, float, float, Bound] | None:
        """Row i's PrefillEstimate fields (tokens/s, low, high, seconds, bound); None where
        the card's rate is unknown."""
        if not self.known[i]:
            return None
        return (float(self.tokens_per_s[i]), float(self.low[i]), float(self.high[i]),
                float(self.seconds[i]), self.bound_of(i))

    def estimate(self, i: int) -> PrefillEstimate | None:
        """Row i's PrefillEstimate (None where the card's rate is unknown)."""
        figures = self.figures(i)
        return None if figures is None else PrefillEstimate(*figures)


def _terms(cards: Sequence[Card], backend: str | None, cal: Calibration) -> list[CardTerms]:
    """Each row's card terms (speed.card_terms, asked once per card)."""
    seen: dict[int, CardTerms] = {}
    out = []
    for c in cards:
        k = seen.get(id(c))
        if k is None:
            k = seen[id(c)] = speed.card_terms(c, backend, cal)
        out.append(k)
    return out


def _columns(rows: list[tuple[float, ...]], width: int) -> Floats:
    """Rows of operands as [operand, row] columns."""
    return np.array(rows, dtype=np.float64).reshape(-1, width).T


def decode_columns(read_bytes_per_token: Floats, kv_bytes_at_context: Floats,
                   n_layers: Floats, cards: Sequence[Card], backend: str | None,
                   cal: Calibration, params_read: Floats, quant: Sequence[str],
                   attention_flops: Floats, expert_matrices: Floats,
                   depth_tokens: Floats | float = 0.0,
                   expert_params: Floats | float = 0.0,
                   read_factor: Floats | float = 1.0,
                   read_factor_slowest: Floats | float = 0.0) -> DecodeColumns:
    """speed.decode_estimates of every row (a column each, one entry per row), as columns."""
    terms = _terms(cards, backend, cal)
    reordered = np.array([k.reorders for k in terms], dtype=bool)
    slow_read: Floats | float = 0.0
    if reordered.any():
        fitted, extra = speed.kernel_reads(read_bytes_per_token, read_factor, read_factor_slowest)
        slow_read = np.where(reordered, extra, 0.0)
        read_bytes_per_token = np.where(reordered, fitted, read_bytes_per_token)
    bandwidth, eta, per_token, per_layer, matrix_mb, shader, low_ratio, high_ratio = _columns(
        [k.decode_operands for k in terms], 8)
    c_q = np.array([k.dequant_work(q) for k, q in zip(terms, quant, strict=True)],
                   dtype=np.float64)
    weights = np.broadcast_to(expert_params, c_q.shape).tolist()
    gemm = np.array([speed.decode_expert_gemm_work(w, q, k) if w else 0.0
                     for k, q, w in zip(terms, quant, weights, strict=True)], dtype=np.float64)
    with np.errstate(all="ignore"):
        tps, low, high, bound, slowest = speed.decode_figures(
            read_bytes_per_token, kv_bytes_at_context, n_layers, bandwidth, eta, per_token,
            per_layer, expert_matrices, matrix_mb, c_q, params_read, cal.attention_decode_factor,
            attention_flops, shader, low_ratio, high_ratio, gemm, slow_read)
        confidence = [k.params.decode_confidence for k in terms]
        if any(k.condition_bands for k in terms):
            depth = np.broadcast_to(depth_tokens, tps.shape)
            low, high = speed.condition_widened(
                tps, low, high, expert_matrices > 0, depth,
                list(_columns([k.condition_operands for k in terms], 4)))
            confidence = [speed.condition_confidence(k, m > 0, d) if k.condition_bands else c
                          for k, m, d, c in zip(terms, expert_matrices.tolist(), depth.tolist(),
                                                confidence, strict=True)]
    return DecodeColumns(tps, low, high, confidence, np.asarray(bound, dtype=np.int64),
                         slowest)


def prefill_columns(flops_per_token: Floats, prompt_tokens: int, cards: Sequence[Card],
                    backend: str | None, cal: Calibration, weights_bytes: Floats,
                    quantized: Sequence[bool], ubatch: int, attention_flops_per_token: Floats,
                    expert_params: Floats, expert_batch: Floats, expert_gemms: Floats,
                    flash_attn: bool, bf16: Sequence[bool],
                    wmma_attention: Sequence[bool],
                    context_tokens: Floats | float = 0.0) -> PrefillColumns:
    """speed.prefill_estimates of every row (int8_mmq: current builds), as columns."""
    rows = min(prompt_tokens, ubatch)
    terms = _terms(cards, backend, cal)
    (tflops, slower, eps, attention_efficiency, bandwidth, eta, tile, phi, dense_low,
     dense_high, moe_low, moe_high, gemm_loop, attention_top) = _columns(
        [k.prefill_operands(q, half, True, flash_attn, rows, wmma)
         for k, q, half, wmma in zip(terms, quantized, bf16, wmma_attention, strict=True)], 14)
    # the tiles' extra work per distinct (expert params, batch, tile, φ): a report has few
    keys = list(zip(expert_params.tolist(), expert_batch.tolist(), tile.tolist(), phi.tolist(),
                    strict=True))
    extra = {key: moe_tile_flops_per_token(key[0], key[1], int(key[2]), key[3])
             for key in set(keys)}
    moe_extra = np.array([extra[key] for key in keys], dtype=np.float64)
    moe = expert_params > 0
    looped_gemms = expert_gemms * gemm_loop  # those that pay the fixed time (expert_gemm_loop)
    with np.errstate(all="ignore"):
        compute, floor = speed.prefill_times(
            prompt_tokens, flops_per_token, attention_flops_per_token, moe_extra, slower,
            attention_efficiency, tflops, eps, weights_bytes, bandwidth, eta, ubatch,
            looped_gemms, cal.moe_expert_gemm_us)
        low_ratio = np.where(moe, moe_low, dense_low)
        high_ratio = np.where(moe, moe_high, dense_high)
        tps, low, high, seconds, by_compute = speed.prefill_rate(
            prompt_tokens, compute, floor, low_ratio, high_ratio)
        # the range's top at k's cap where the backend's k was not fitted on its own deep rows
        widen = (attention_top != attention_efficiency) & (attention_flops_per_token > 0)
        if widen.any():
            top, _ = speed.prefill_times(
                prompt_tokens, flops_per_token, attention_flops_per_token, moe_extra, slower,
                attention_top, tflops, eps, weights_bytes, bandwidth, eta, ubatch,
                looped_gemms, cal.moe_expert_gemm_us)
            high_top = speed.prefill_rate(prompt_tokens, top, floor, low_ratio, high_ratio)[2]
            high = np.where(widen, np.maximum(high, high_top), high)
        if any(k.prefill_condition_bands for k in terms):
            low, high = speed.condition_widened(
                tps, low, high, moe, np.broadcast_to(context_tokens, tps.shape),
                list(_columns([k.prefill_condition_operands for k in terms], 4)))
    return PrefillColumns(np.isfinite(compute) & np.isfinite(floor), tps, low, high, seconds,
                          by_compute)
