"""zz_catalog.pickle: the build writes it byte for byte as committed, the records it gives equal
the validated JSON's, and a stale file (JSON edited since) is ignored."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

import build_compact

from tpscalc.catalog import quants, store
from tpscalc.estimate.runtime import LlamaCpp


def test_committed_files_are_the_rebuild() -> None:
    built = build_compact.build()
    assert sorted(p.name for p in built) == sorted(
        (store.COMPACT_FILE, store.MODELS_FILE, store.EACH_MODEL_FILE))
    for path, content in built.items():
        assert path.read_bytes() == content, path.name


def test_compact_records_equal_the_validated_ones() -> None:
    assert store._compact() is not None  # the committed file matches the JSON
    first, every = store._compact(), store._compact_models()
    assert first is not None and every is not None
    fast = {**first, **every, "weights": store.weights_sizes()}
    for rows, validated in ((fast["cards"], store.validated_cards()),
                            (fast["models"], store.validated_models()),
                            (fast["quants"]["ladder"], quants.validated("ladder")),
                            (fast["quants"]["extra"], quants.validated("extra"))):
        assert len(rows) == len(validated)
        for a, b in zip(rows, validated, strict=True):
            assert type(a) is type(b) and a == b
            assert a.model_dump(mode="json") == b.model_dump(mode="json")
    table = store.weights_sizes_of(store.weights_table())
    assert {slug: fast["weights"][slug] for slug in table} == table
    # the models weights.json leaves out: the engine's formula, as it computes them without
    types = store.weights_table()[0]
    formula = LlamaCpp()._weights_bytes
    approximated = [m for m in store.validated_models() if m.slug not in table]
    assert approximated and all(m.architecture is None for m in approximated)
    assert set(fast["weights"]) == set(table) | {m.slug for m in approximated}
    for m in approximated:
        assert fast["weights"][m.slug] == dict(zip(types, formula(m, types), strict=True))
    assert store.models() == store.validated_models()
    assert store.cards() == store.validated_cards()


def test_loading_the_compact_catalog_imports_no_pydantic() -> None:
    code = ("import sys; from tpscalc.catalog import store, quants; store.cards(); "
            "store.models(); quants.quantizations(); print('pydantic' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_a_stale_compact_file_is_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store, "compact_is_newest", lambda: False)  # a JSON file edited since
    monkeypatch.setattr(store, "source_crcs",
                        lambda: {"cards.json": 0, "models.json": 0, "quants.json": 0,
                                 "weights.json": 0})
    store._compact.cache_clear()
    try:
        assert store._compact() is None
    finally:
        store._compact.cache_clear()


def test_the_crcs_are_read_again_only_when_a_json_file_is_newer(tmp_path: Path) -> None:
    import os

    for name in (*store.COMPACT_SOURCES, store.COMPACT_FILE):
        (tmp_path / name).write_bytes(b"{}")
        os.utime(tmp_path / name, ns=(10**18, 10**18))
    assert store.compact_is_newest(str(tmp_path))  # built from the files as they are
    os.utime(tmp_path / "models.json", ns=(10**18 + 1, 10**18 + 1))  # edited after the build
    assert not store.compact_is_newest(str(tmp_path))
    os.utime(tmp_path / store.COMPACT_FILE, ns=(10**18 + 2, 10**18 + 2))  # rebuilt
    assert store.compact_is_newest(str(tmp_path))
    (tmp_path / "weights.json").unlink()
    assert not store.compact_is_newest(str(tmp_path))


def test_when_the_json_is_newer_the_committed_crcs_still_match(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store, "compact_is_newest", lambda: False)
    store._compact.cache_clear()
    try:
        assert store._compact() is not None
    finally:
        store._compact.cache_clear()


def test_a_models_record_is_unpickled_on_first_use() -> None:
    import pickle

    from tpscalc.catalog.schema import RECORD_HOT_KEYS

    raw = store.read_bytes(store.MODELS_FILE)
    models = pickle.loads(raw)["models"]
    validated = {m.slug: m for m in store.validated_models()}
    for m in models:
        for key in RECORD_HOT_KEYS:  # read without unpickling the record
            assert m.record_value(key) == validated[m.slug].record.get(key)
        assert "record" not in m.__dict__
    m = models[0]
    copy = pickle.loads(pickle.dumps(m))  # a copy for another process, still lazy
    assert "record" not in copy.__dict__
    assert copy.record == m.record == validated[m.slug].record and "record" in m.__dict__
    assert m == validated[m.slug] and copy == m
    changed = m.model_copy(update={"record": {"task": ["Semantic embedding"]}})
    assert changed.record_value("task") == ["Semantic embedding"] and not changed.generates
    assert pickle.loads(pickle.dumps(changed)).record == {"task": ["Semantic embedding"]}
    with pytest.raises(AttributeError):
        _ = m.no_such_field  # type: ignore[attr-defined]


def test_the_stored_card_name_keys_are_name_key_of_each_name() -> None:
    from tpscalc.catalog.lookup import name_key

    keys = store.card_name_keys()
    assert list(keys) == [c.name for c in store.validated_cards()]
    for name, (compact, core, words) in keys.items():
        assert name_key(name) == (compact, core, frozenset(words))


def test_a_compact_file_naming_a_class_that_is_gone_is_ignored(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import pickle

    gone = b"ctpscalc.catalog.lookup\n_NoSuchClass\n)\x81."  # GLOBAL, (), NEWOBJ, STOP
    for raw in (gone, pickle.dumps({"x": 1})[:-1]):  # a class that is gone; a cut file
        monkeypatch.setattr(store, "read_bytes", lambda name, raw=raw: raw)
        store._compact.cache_clear()
        try:
            assert store._compact() is None
        finally:
            store._compact.cache_clear()


def test_a_model_found_by_name_is_read_alone_then_kept_in_models(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from tpscalc.catalog import get_model

    for fn in (store.models, store._compact_models, store.weights_sizes):
        fn.cache_clear()
    monkeypatch.setattr(store, "_ALONE", {})
    try:
        names = store.model_names()
        assert names is not None
        validated = store.validated_models()
        assert [(n.name, n.slug) for n in names] == [(m.name, m.slug) for m in validated]
        # each model alone equals the validated one, with the same weight sizes
        for i, m in enumerate(validated):
            assert store.model_at(i) == m
        assert store.models.cache_info().currsize == 0  # nothing else loaded
        assert store._compact_models.cache_info().currsize == 0
        found = get_model("StarCoder 2 15B")
        assert found is store.model_at(validated.index(found))  # one object per model
        alone = {m.slug: store.model_weights_sizes(m.slug) for m in validated}
        every = store.models()
        assert every == validated and all(a is store.model_at(i) for i, a in enumerate(every))
        assert store.model_names() is None  # once all are loaded, lookups use them
        assert alone == {m.slug: store.weights_sizes().get(m.slug) for m in validated}
        assert get_model("starcoder2-15b") is found
    finally:
        for fn in (store.models, store._compact_models, store.weights_sizes):
            fn.cache_clear()


def test_an_each_model_file_of_another_build_is_not_read(
        monkeypatch: pytest.MonkeyPatch) -> None:
    first = store._compact()
    assert first is not None
    monkeypatch.setitem(first, "each_model_header", b"another build")
    monkeypatch.setattr(store, "_ALONE", {})
    store.models.cache_clear()
    try:
        assert store.model_at(3) is store.models()[3]  # from the models file instead
    finally:
        store.models.cache_clear()
