"""The CLI's JSON writer is byte-identical to json.dumps(..., ensure_ascii=False, indent=1)."""
from __future__ import annotations

import json
from enum import IntEnum

import pytest

from tpscalc.cli.jsonout import dumps


class Level(IntEnum):
    LOW = 1


SAMPLES = [
    {}, [], "", 0, -1.5, 1e300, 0.1, 3.0, float("nan"), float("inf"), float("-inf"), True, None,
    {"a": [1, 2.5, {"b": None, "c": []}], "é": "ü\"\\\n\t\u2028", "d": {}, "e": (1, "x")},
    {1: "int key", 2.5: "float key", False: "bool", None: "none"},
    [[[]], [{}], [[1]]],
    {"on": True, "off": False, "in": [True, False], "nan": float("nan"), "inf": float("-inf")},
    {"enum": Level.LOW},  # not a plain int: json.dumps writes it
    {(1, 2): "tuple key"},  # json.dumps refuses it: so does dumps
]


@pytest.mark.parametrize("value", SAMPLES, ids=range(len(SAMPLES)))
def test_same_bytes_as_json_dumps(value: object) -> None:
    try:
        expected = json.dumps(value, ensure_ascii=False, indent=1)
    except TypeError:
        with pytest.raises(TypeError):
            dumps(value)
        return
    assert dumps(value) == expected


def test_same_bytes_on_real_reports() -> None:
    from tpscalc.api import card_report, model_report, report_json

    for data in (report_json(model_report("StarCoder 2 15B", lang="es")),
                 report_json(card_report("RTX 4090", all=True))):
        assert dumps(data) == json.dumps(data, ensure_ascii=False, indent=1)


def test_equal_keys_of_other_types_are_written_each_their_own_way() -> None:
    from tpscalc.cli import jsonout

    for data in ([{1: 0}, {True: 0}, {1.0: 0}], [{"a": 1, 2: 3}, {"a": 1, 2.0: 3}]):
        assert jsonout.dumps(data) == json.dumps(data, ensure_ascii=False, indent=1)
