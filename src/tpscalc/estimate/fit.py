"""Does a model fit a card, how comfortably, and which quantization each card should run.

Rules (memory in GiB, usable memory = `Card.usable_memory_gib`):
- it *fits* when the total memory needed ≤ the usable memory;
- the fit is "comfortable" when it would still fit with the context doubled (the headroom a
  longer conversation needs), "tight" when it fits only as asked, "no" when it does not fit.
The chooser gives every card the least compressed quantization of the ladder that fits and is
not more compressed than the quality floor, for all cards in one call.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from tpscalc.catalog.frozen import FrozenValue
from tpscalc.estimate.types import FitLabel

COMFORTABLE, TIGHT, NO = "comfortable", "tight", "no"


def fits(total_gib: float, usable_gib: float) -> bool:
    """True when the memory needed is at most the card's usable memory."""
    return total_gib <= usable_gib


def fit_label(total_gib: float, usable_gib: float, doubled_context_total_gib: float) -> FitLabel:
    """'comfortable' if it fits even at twice the context, 'tight' if it fits, else 'no'."""
    if doubled_context_total_gib <= usable_gib:
        return "comfortable"
    if total_gib <= usable_gib:
        return "tight"
    return "no"


@dataclass(frozen=True, eq=False, repr=False)  # eq, hash, repr: FrozenValue
class QuantChoice(FrozenValue):
    """Per card: ladder index chosen (-1: none fits), fit label, and GiB missing when none fits."""

    index: list[int]  # one per card
    label: list[str]  # "comfortable" / "tight" / "no"
    short_by_gib: list[float]  # 0 where something fits


Totals = Sequence[float] | Sequence[Sequence[float]]


def _per_card(values: Totals, n_cards: int) -> list[Sequence[float]]:
    """Quant totals, (quants,) or (cards, quants), as one row of totals per card."""
    rows = list(values)
    if rows and not hasattr(rows[0], "__len__"):
        return [rows] * n_cards  # type: ignore[list-item]
    if len(rows) == n_cards:
        return rows  # type: ignore[return-value]
    raise ValueError(f"totals must be (quants,) or (cards={n_cards}, quants), got {len(rows)} rows")


def choose_quants(totals_gib: Totals, usable_gib: Sequence[float],
                  floor_index: int | None = None, doubled_totals_gib: Totals | None = None,
                  ceiling_index: int | None = None) -> QuantChoice:
    """For every card, the least compressed allowed quantization that fits.

    totals_gib: memory needed at each ladder quantization, least compressed first, either one
    row for all cards (quants,) or one per card (cards, quants) when backends differ.
    usable_gib: usable memory of each card (cards,). floor_index: the most compressed ladder
    index allowed (None: all). doubled_totals_gib: the same totals at twice the context, for
    the comfortable/tight label (None: every fit is 'tight'). ceiling_index: the least
    compressed ladder index allowed (None: all).
    """
    usable = [float(u) for u in usable_gib]
    totals = _per_card(totals_gib, len(usable))
    doubled = None if doubled_totals_gib is None else _per_card(doubled_totals_gib, len(usable))
    n_quants = len(totals[0]) if totals else 0
    if any(len(row) != n_quants for row in totals):
        raise ValueError("totals must have one value per quantization on every row")
    top = 0 if ceiling_index is None else max(ceiling_index, 0)
    bottom = n_quants - 1 if floor_index is None else min(floor_index, n_quants - 1)
    allowed = range(top, bottom + 1)
    index, label, short = [], [], []
    for i, (room, row) in enumerate(zip(usable, totals)):
        j = next((q for q in allowed if row[q] <= room), -1)
        index.append(j)
        if j < 0:
            label.append(NO)
            short.append(min((float(row[q]) for q in allowed), default=math.inf) - room)
            continue
        label.append(COMFORTABLE if doubled is not None and doubled[i][j] <= room else TIGHT)
        short.append(0.0)
    return QuantChoice(index=index, label=label, short_by_gib=short)


BALANCED_KLD = 0.05  # "balanced": the fastest quantization still near-lossless (quality.WORDS)


def choose_by_preference(klds: Sequence[float], speeds: Sequence[float | None],
                         prefer: str | None = None, min_tps: float | None = None) -> int:
    """Among one card's quantizations, the index to show (-1: none fits).

    klds: the estimated mean KL divergence of each (nats); speeds: its decode speed, tokens/s
    (None where it does not fit), both in ladder order, least compressed first. min_tps: keep
    those reaching it (all, when none does: the fastest then wins). prefer: "speed" the
    fastest, "balanced" the fastest with KLD under BALANCED_KLD (else the best quality),
    "quality" or None the lowest KLD. Ties go to the earlier, less compressed entry.
    """
    fitting = [i for i, s in enumerate(speeds) if s is not None]
    if not fitting:
        return -1
    if min_tps is not None:
        reaching = [i for i in fitting if (speeds[i] or 0.0) >= min_tps]
        if not reaching:
            return max(fitting, key=lambda i: (speeds[i] or 0.0, -i))
        fitting = reaching
    if prefer == "speed":
        return max(fitting, key=lambda i: (speeds[i] or 0.0, -i))
    if prefer == "balanced":
        near = [i for i in fitting if klds[i] < BALANCED_KLD]
        if near:
            return max(near, key=lambda i: (speeds[i] or 0.0, -i))
    return min(fitting, key=lambda i: (klds[i], i))
