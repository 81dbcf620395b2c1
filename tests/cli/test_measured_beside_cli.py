"""`tpscalc estimate` shows the measured speed beside the estimate for a device whose runs are in
a table other than the main one (the Strix Halo's, from a benchmark repository): the
calibration's measured table holds every table's llama-bench default tests on an empty cache
(real catalog and calibration)."""

from __future__ import annotations

import json
import subprocess
import sys

from tpscalc.estimate.calibration import lookup_measured
from tpscalc.estimate.calibration_store import calibration

CARD = "Ryzen AI Max+ 395 (Radeon 8060S)"
MODEL = "Qwen3.6-35B-A3B"


def test_a_benchmark_repositorys_run_is_shown_beside_the_estimate() -> None:
    held = lookup_measured(calibration(), CARD, MODEL, "BF16", "vulkan")
    assert held is not None and held.test == "tg128"
    done = subprocess.run(
        [sys.executable, "-m", "tpscalc", "estimate", "--model", MODEL, "--gpu", CARD,
         "--backend", "vulkan", "--quant", "BF16", "--json"],
        capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["decode"]["measured"] == held.tokens_per_s
    assert out["measured"]["decode_test"] == "tg128"
    assert "strix-halo" in out["measured"]["source"]
    # at a depth the empty-cache measurement is not offered as the run's own
    deep = subprocess.run(
        [sys.executable, "-m", "tpscalc", "estimate", "--model", MODEL, "--gpu", CARD,
         "--backend", "vulkan", "--quant", "BF16", "--context", "40000", "--depth", "32768",
         "--json"], capture_output=True, text=True, timeout=120, check=False)
    assert deep.returncode == 0, deep.stderr
    assert json.loads(deep.stdout).get("measured") is None
