"""The CPU model's constants (estimate/cpu_speed.py CPU_FIT) are what benchmarks/cpu_rows.py
fits on the CPU-only rows, not numbers set by hand; and every row it lists can be placed."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from tpscalc.estimate.cpu_speed import CPU_FIT

BENCH = Path(__file__).parents[2] / "benchmarks" / "cpu_rows.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cpu_rows", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_cpu_fit_is_the_benchmark_fit() -> None:
    bench = _bench()
    rows = [bench._row(case) for case in bench.cpu_cases()]
    assert all(r is not None for r in rows)
    assert bench.fit(rows) == CPU_FIT
