"""The card-independent terms of a model are made once per (model, quantizations, query) and
are the same as freshly made ones; another query or another model gets its own."""
from __future__ import annotations

import numpy as np

from tpscalc.catalog import store
from tpscalc.estimate import engine
from tpscalc.estimate.query import Query


def test_terms_are_made_once_and_equal_fresh_ones() -> None:
    model = next(m for m in store.models() if m.architecture is not None)
    quants = ("Q8_0", "Q4_K_M")
    first = engine._terms(model, quants, Query())
    assert engine._terms(model, list(quants), Query()) is first
    fresh = engine._model_terms(model, quants, Query())
    assert np.array_equal(first.weights, fresh.weights) and first.kv == fresh.kv
    longer = engine._terms(model, quants, Query(context=2 * Query().context))
    assert longer is not first and longer.kv > first.kv


def test_a_model_at_a_reused_address_is_not_mistaken(monkeypatch) -> None:
    model = next(m for m in store.models() if m.architecture is not None)
    other = next(m for m in store.models() if m.architecture is not None and m is not model
                 and m.architecture != model.architecture)
    quants = ("Q8_0",)
    monkeypatch.setattr(engine, "_TERMS_MEMO", {(id(other), quants, Query()):
                                                (model, engine._model_terms(model, quants,
                                                                            Query()))})
    got = engine._terms(other, quants, Query())
    assert np.array_equal(got.weights, engine._model_terms(other, quants, Query()).weights)
