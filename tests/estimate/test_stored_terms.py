"""The terms the catalog build stores beside each model (tools/build_compact.py) are what the
engine computes for it now, and are taken only for the query, ladder and model they were made
for."""
from __future__ import annotations

from dataclasses import replace

import pytest

from tpscalc.catalog import store
from tpscalc.estimate import engine
from tpscalc.estimate.query import Query, context_within_limit


def _stored_models() -> list[tuple[object, tuple[object, ...]]]:
    store.models()
    held = store.stored_terms()
    assert held is not None and tuple(held["fields"]) == engine.TERMS_FIELDS
    return list(zip(held["models"], held["rows"], strict=True))


def test_every_stored_row_is_the_engines_own_now() -> None:
    rows = _stored_models()
    assert len(rows) == len(store.models())
    for model, row in rows:
        query = replace(Query(), context=context_within_limit(model, Query()))
        assert row == engine.stored_terms_row(model, query), model.name  # type: ignore[arg-type]


def test_stored_terms_are_taken_for_their_own_inputs_only() -> None:
    model, (_, _, ladder, _, values) = next((m, r) for m, r in _stored_models()
                                      if m.architecture is not None and m.name != "")
    query = replace(Query(), context=context_within_limit(model, Query()))
    found = engine._stored(model, ladder, query)
    assert found is not None
    assert tuple(getattr(found, n) for n in engine.TERMS_FIELDS) == values
    assert engine._stored(model, ladder[1:], query) is None
    assert engine._stored(model, ladder, replace(query, kv_type="q8_0")) is None
    assert engine._stored(model, ladder, replace(query, context=query.context // 2)) is None
    assert engine._stored(replace(model), ladder, query) is None  # an equal record, not it


def test_stored_formats_are_the_runtimes() -> None:
    for model, row in _stored_models():
        assert engine._formats(model) == row[0] == engine.runtime.formats(model)  # type: ignore
        assert engine._native(model) == row[1] == engine.runtime.native_format(model)  # type: ignore


@pytest.mark.parametrize("change", [{"kv_type": "q4_0"}, {"flash_attn": False},
                                    {"n_ubatch": 256}, {"text_only": True}])
def test_a_card_report_at_another_query_computes_its_terms(change: dict[str, object]) -> None:
    model = next(m for m, _ in _stored_models() if m.architecture is not None)
    query = replace(Query(), **change)
    ladder = engine._ladder(model, query)
    assert engine._stored(model, ladder, query) is None
