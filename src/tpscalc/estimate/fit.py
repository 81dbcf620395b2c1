"""Does a model fit a card, how comfortably, and which quantization each card should run.

Rules (memory in GiB, usable memory = `Card.usable_memory_gib`):
- it *fits* when the total memory needed ≤ the usable memory;
- the fit is "comfortable" when it would still fit with the context doubled (the headroom a
  longer conversation needs), "tight" when it fits only as asked, "no" when it does not fit.
The chooser gives every card the least compressed quantization of the ladder that fits and is
not more compressed than the quality floor, vectorised over all cards at once (numpy).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # numpy.typing costs ~20 ms to import; annotations only
    from numpy.typing import ArrayLike, NDArray

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


@dataclass(frozen=True)
class QuantChoice:
    """Per card: ladder index chosen (-1: none fits), fit label, and GiB missing when none fits."""

    index: NDArray[np.int64]  # shape (cards,)
    label: NDArray[np.str_]  # "comfortable" / "tight" / "no"
    short_by_gib: NDArray[np.float64]  # 0 where something fits


def _per_card(values: ArrayLike, n_cards: int) -> NDArray[np.float64]:
    """Broadcast quant totals, (quants,) or (cards, quants), to (cards, quants)."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim == 1:
        return np.broadcast_to(arr, (n_cards, arr.shape[0]))
    if arr.ndim == 2 and arr.shape[0] == n_cards:
        return arr
    raise ValueError(f"totals must be (quants,) or (cards={n_cards}, quants), got {arr.shape}")


def choose_quants(totals_gib: ArrayLike, usable_gib: ArrayLike, floor_index: int | None = None,
                  doubled_totals_gib: ArrayLike | None = None,
                  ceiling_index: int | None = None) -> QuantChoice:
    """For every card, the least compressed allowed quantization that fits, without a card loop.

    totals_gib: memory needed at each ladder quantization, least compressed first, either one
    row for all cards (quants,) or one per card (cards, quants) when backends differ.
    usable_gib: usable memory of each card (cards,). floor_index: the most compressed ladder
    index allowed (None: all). doubled_totals_gib: the same totals at twice the context, for
    the comfortable/tight label (None: every fit is 'tight'). ceiling_index: the least
    compressed ladder index allowed (None: all).
    """
    usable = np.asarray(usable_gib, dtype=np.float64).reshape(-1)
    totals = _per_card(totals_gib, usable.shape[0])
    n_quants = totals.shape[1]
    ladder = np.arange(n_quants)
    allowed = (ladder <= (n_quants - 1 if floor_index is None else floor_index)) \
        & (ladder >= (0 if ceiling_index is None else ceiling_index))
    ok = (totals <= usable[:, None]) & allowed[None, :]
    any_ok = ok.any(axis=1)
    index = np.where(any_ok, ok.argmax(axis=1), -1).astype(np.int64)
    rows = np.arange(usable.shape[0])
    safe = np.clip(index, 0, None)
    label = np.where(any_ok, TIGHT, NO).astype("<U11")
    if doubled_totals_gib is not None:
        doubled = _per_card(doubled_totals_gib, usable.shape[0])
        roomy = any_ok & (doubled[rows, safe] <= usable)
        label = np.where(roomy, COMFORTABLE, label)
    smallest_allowed = np.where(allowed[None, :], totals, np.inf).min(axis=1)
    short = np.where(any_ok, 0.0, smallest_allowed - usable)
    return QuantChoice(index=index, label=label, short_by_gib=short)
