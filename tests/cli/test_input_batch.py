"""`estimate --input`: names resolved once per batch give the answers one call per row gives,
and the JSON is written a row at a time, byte for byte what one dumps() writes."""
from __future__ import annotations

import contextlib
import io

import pytest

from tpscalc import api
from tpscalc.cli import jsonout
from tpscalc.cli.estimate_run import _print_stream

ROWS = [
    {"model": "Llama 3.1-8B", "card": "RTX 4090", "context": "8192"},
    {"model": "Llama 3.1-8B", "card": "RTX 4090", "context": "8192"},  # the same request
    {"model": "Llama 3.1-8B", "gpu": "2x RTX 3090", "ram_gib": "64", "quant": "Q8_0"},
    {"model": "Mistral 7B", "card": "A100 80GB", "context": "16384"},  # context, then card
    {"model": "Mistral 7B", "card": "A100 80GB"},  # the ambiguous card
    {"model": "Nope Model", "card": "RTX 4090"},
    {"model": "Llama 3.1-8B", "card": "RTX 4090", "depth": "4096", "n_gen": "128"},
    {"model": "", "card": "RTX 4090"},
]


def _one_by_one(row: dict[str, str]) -> dict:
    options = api.estimate_options(row)
    try:
        return api.evaluate(row["model"], row.get("card") or row.get("gpu") or "",
                            quant=row.get("quant") or None, compare=False, **options)
    except api.INPUT_ERRORS as exc:
        return api._error_row(row, str(exc))


def test_a_batch_answers_as_one_call_per_row() -> None:
    batch = api.evaluate_many(ROWS)
    assert batch == [_one_by_one(r) for r in ROWS]
    assert batch[0] == batch[1] and batch[0] is not batch[1]
    assert "beyond its limit" in batch[3]["error"] and "ambiguous" in batch[4]["error"]


@pytest.mark.parametrize("rows", [[], [{"error": None, "a": 1}],
                                  [{"error": None, "a": "x\ny", "b": [1, {"c": None}]},
                                   {"error": None}]])
def test_json_rows_are_written_as_dumps_writes_them(rows: list) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        _print_stream(iter(rows), "en", as_json=True)
    assert out.getvalue() == jsonout.dumps(rows) + "\n"
