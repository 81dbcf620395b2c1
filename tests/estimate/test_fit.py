"""Fit labels and the vectorised per-card quantization chooser."""
from __future__ import annotations

import numpy as np
import pytest

from tpscalc.estimate.fit import choose_quants, fit_label, fits


@pytest.mark.parametrize(("total", "doubled", "usable", "label"), [
    (9.8, 11.0, 12.0, "comfortable"),  # still fits at twice the context
    (9.8, 12.5, 12.0, "tight"),
    (12.0, 13.0, 12.0, "tight"),       # exactly full still fits
    (12.1, 13.0, 12.0, "no"),
])
def test_fit_label(total: float, doubled: float, usable: float, label: str) -> None:
    assert fit_label(total, usable, doubled) == label
    assert fits(total, usable) == (label != "no")


# StarCoder 2 15B-like totals (GiB) at Q8_0, Q6_K, Q4_K_M, IQ4_XS, and the same at 2× context.
TOTALS = np.array([16.8, 13.3, 9.8, 8.9])
DOUBLED = TOTALS + 2.0
USABLE = np.array([180.0, 16.0, 12.0, 10.0, 8.0])


def test_least_compressed_quant_that_fits() -> None:
    c = choose_quants(TOTALS, USABLE, doubled_totals_gib=DOUBLED)
    assert c.index == [0, 1, 2, 2, -1]  # the 10 GiB card still holds Q4_K_M (9.8)
    assert c.label == ["comfortable", "comfortable", "comfortable", "tight", "no"]
    assert c.short_by_gib == pytest.approx([0, 0, 0, 0, 0.9])  # 8.9 - 8.0


def test_quality_floor_hides_cards_that_only_fit_below_it() -> None:
    c = choose_quants(TOTALS, np.array([16.0, 9.0, 8.0]), floor_index=2)
    assert c.index == [1, -1, -1]  # 9 GiB would fit IQ4_XS (8.9), below the floor
    assert c.short_by_gib == pytest.approx([0, 0.8, 1.8])  # 9.8 - usable
    assert set(c.label) <= {"tight", "no"}  # no doubled totals given


def test_per_card_totals_for_mixed_backends() -> None:
    totals = np.vstack([TOTALS, TOTALS + 0.5])  # second card: bigger backend overhead
    c = choose_quants(totals, np.array([10.0, 10.0]))
    assert c.index == [2, 3]


def test_matches_a_plain_loop_on_random_cards() -> None:
    rng = np.random.default_rng(7)
    totals = np.sort(rng.uniform(2, 80, 13))[::-1]
    doubled = totals + rng.uniform(0, 8, 13)
    usable = rng.uniform(1, 200, 850)
    floor = 9
    c = choose_quants(totals, usable, floor, doubled)
    for i, u in enumerate(usable):
        ok = [q for q in range(floor + 1) if totals[q] <= u]
        want = ok[0] if ok else -1
        assert c.index[i] == want
        label = "no" if want < 0 else ("comfortable" if doubled[want] <= u else "tight")
        assert c.label[i] == label


def test_bad_shape_is_rejected() -> None:
    with pytest.raises(ValueError):
        choose_quants(np.ones((3, 4)), np.ones(5))
