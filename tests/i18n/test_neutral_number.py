"""neutral_number rounds the repr half-even without Decimal where it can: the same text as
Decimal(repr) formatted, on the edge cases and on many seeded values."""
from __future__ import annotations

import random
from decimal import Decimal

from tpscalc.i18n import neutral_number

EDGES = [0.0, -0.0, 0.5, 1.5, 2.5, 0.05, 0.15, 0.25, 0.35, 2.25, 2.35, 9.95, 9.96, 99.95,
         999.5, 0.0049, 1e16, 1e-5, 123456789.125, 0.791, 5, 0, -3, 1234567, -2.5,
         float("inf"), float("nan")]


def _values() -> list[float]:
    rng = random.Random(12)
    out: list[float] = list(EDGES)
    for _ in range(20_000):
        r = rng.random()
        out += [r * 10 ** rng.randint(-3, 12), round(r * 1000, rng.randint(0, 4)),
                float(rng.randint(0, 10**6)), rng.randint(0, 10**9), -r * 100]
    return out


def test_neutral_number_is_decimals_text() -> None:
    for value in _values():
        for digits in (0, 1, 2, 3):
            assert neutral_number(value, digits) == f"{Decimal(str(value)):,.{digits}f}", (
                value, digits)
