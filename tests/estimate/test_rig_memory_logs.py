"""A placement's per-device memory against what llama.cpp printed when it loaded the same model
(the logs in ../shared/data/measured/llamacpp_memory_logs.csv, transcribed with their row
numbers in benchmarks/rig_accuracy.py, which prints the comparison)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).parents[2] / "benchmarks" / "rig_accuracy.py"


def _rows() -> list[tuple[str, str, float, float]]:
    spec = importlib.util.spec_from_file_location("rig_accuracy", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    rows: list[tuple[str, str, float, float]] = module.memory_rows()
    return rows


def test_weights_and_kv_per_device_within_5_percent_of_the_logs() -> None:
    rows = _rows()
    assert len({label for label, *_ in rows}) >= 4
    for label, key, ours, logged in rows:
        bound = 0.12 if key == "compute" else 0.05  # the compute buffer is a rule, not a sum
        assert abs(ours / logged - 1) <= bound, (label, key, ours, logged)
