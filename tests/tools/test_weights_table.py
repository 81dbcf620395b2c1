"""The committed weights.json agrees with the formulas it caches (so it cannot drift)."""
from __future__ import annotations

import random

import pytest

from tpscalc.catalog import store
from tpscalc.catalog.quants import quantizations
from tpscalc.estimate.weights import weights_bytes, weights_read_per_token_bytes


def test_table_covers_every_model_with_an_architecture() -> None:
    types, rows = store.weights_table()
    assert list(types[: len(quantizations())]) == [q.name for q in quantizations()]
    with_arch = {m.slug for m in store.models() if m.architecture is not None}
    assert set(rows) == with_arch


@pytest.mark.parametrize("seed", range(3))
def test_sampled_rows_match_the_formulas(seed: int) -> None:
    types, rows = store.weights_table()
    models = [m for m in store.models() if m.architecture is not None]
    for model in random.Random(seed).sample(models, 8):
        for i, t in enumerate(types):
            w, r = rows[model.slug][i]
            assert w == weights_bytes(model.architecture, t), (model.name, t)
            assert r == round(weights_read_per_token_bytes(model.architecture, t)), (model.name, t)
