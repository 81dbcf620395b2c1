"""catalog.pickle: the build writes it byte for byte as committed, the records it gives equal
the validated JSON's, and a stale file (JSON edited since) is ignored."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

import build_compact

from tpscalc.catalog import store


def test_committed_file_is_the_rebuild() -> None:
    assert build_compact.OUT.read_bytes() == build_compact.build()


def test_compact_records_equal_the_validated_ones() -> None:
    assert store._compact() is not None  # the committed file matches the JSON
    fast = store._compact()
    assert fast is not None
    for kind, rows, validated in ((store.Card, fast["cards"], store.validated_cards()),
                                  (store.Model, fast["models"], store.validated_models())):
        rebuilt = [store.construct(kind, row) for row in store.compact_rows(validated)]
        assert len(rebuilt) == len(rows) == len(validated)
        for a, b in zip(rebuilt, validated, strict=True):
            assert a == b and a.__getstate__() == b.__getstate__()
    assert store.models() == store.validated_models()
    assert store.cards() == store.validated_cards()


def test_a_stale_compact_file_is_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store, "source_crcs", lambda: {"cards.json": 0, "models.json": 0})
    store._compact.cache_clear()
    try:
        assert store._compact() is None
    finally:
        store._compact.cache_clear()
