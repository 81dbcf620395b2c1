"""The catalog's records without pydantic at run time: their own JSON dump equals pydantic's,
validation still rejects impossible values, and loading the catalog imports no pydantic."""
from __future__ import annotations

import pytest

from tpscalc.catalog import quants, store
from tpscalc.catalog.schema import Architecture, Card, Record
from tpscalc.catalog.validate import ValidationError, dump


def _records() -> list[Record]:
    out: list[Record] = [*store.cards(), *store.models(), *quants.all_quantizations()]
    out += [m.architecture for m in store.models() if m.architecture is not None]
    return out


def test_json_dump_equals_pydantics_on_the_whole_catalog() -> None:
    for record in _records():
        assert record.model_dump(mode="json") == dump(record, mode="json")
    arch = next(m.architecture for m in store.models() if m.architecture is not None)
    assert arch.model_dump(mode="json", exclude={"hf_config"}) == dump(
        arch, mode="json", exclude={"hf_config"})


def test_validation_rejects_what_the_constraints_forbid() -> None:
    good = {"name": "X", "slug": "x", "vendor": "NVIDIA", "memory_gib": 24,
            "bandwidth_gb_s": 1000}
    card = Card.model_validate(good)
    assert card.memory_gib == 24.0 and isinstance(card.memory_gib, float)  # coerced as before
    for bad in ({"memory_gib": 0}, {"slug": "Not A Slug"}, {"name": ""}, {"colour": "red"},
                {"kind": "phone"}):
        with pytest.raises(ValidationError):
            Card.model_validate({**good, **bad})


def test_consistency_checks_run_on_construction_too() -> None:
    arch = next(m.architecture for m in store.models() if m.architecture is not None)
    with pytest.raises(ValueError, match="num_kv_heads"):
        Architecture(**{**arch.model_dump(), "vision": arch.vision,
                        "num_kv_heads": arch.num_attention_heads + 1})


def test_model_copy_replaces_fields_without_touching_the_original() -> None:
    card = store.cards()[0]
    copy = card.model_copy(update={"memory_gib": 1.0})
    assert copy.memory_gib == 1.0 and card.memory_gib != 1.0
    assert copy.name == card.name and type(copy) is Card


def test_frozen_value_methods_match_the_generated_ones() -> None:
    from dataclasses import dataclass, field

    from tpscalc.catalog.frozen import FrozenValue

    @dataclass(frozen=True)
    class Made:
        x: int
        y: float = 1.0
        z: str = field(default="", compare=False, repr=False)

    @dataclass(frozen=True, eq=False, repr=False)
    class Made2(FrozenValue):
        x: int
        y: float = 1.0
        z: str = field(default="", compare=False, repr=False)

    nan = float("nan")
    for args in ((1,), (2, 2.5, "a"), (3, nan)):
        a, b = Made(*args), Made2(*args)
        assert repr(a).replace("Made(", "Made2(") == repr(b)
        assert hash(a) == hash(b)
        assert (a == Made(*args)) == (b == Made2(*args))  # NaN: equal as the same object
    assert Made2(1, 1.0, "a") == Made2(1, 1.0, "b") and Made2(1) != Made2(2)
    assert Made2(1) != Made(1) and Made2(1) != (1, 1.0)
