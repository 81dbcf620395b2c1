"""`tpscalc.estimate(...)` works in a fresh interpreter before and after the engine is imported."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

# Importing tpscalc.estimate.engine binds the name tpscalc.estimate to the subpackage, which
# must stay callable; the API function is reached through tpscalc.__getattr__ otherwise.
SCRIPTS = {
    "before": "import tpscalc\nout = tpscalc.estimate('Llama 3-8B', 'RTX 4090')\n"
              "import tpscalc.estimate.engine\nkind = type(tpscalc.estimate).__name__\n",
    "after": "import tpscalc\nimport tpscalc.estimate.engine\nkind = type(tpscalc.estimate).__name__\n"
             "out = tpscalc.estimate('Llama 3-8B', 'RTX 4090')\n",
}


def _run(script: str) -> dict[str, object]:
    code = script + "import json\nprint(json.dumps({'kind': kind, 'out': out}))\n"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def results() -> dict[str, dict[str, object]]:
    return {order: _run(script) for order, script in SCRIPTS.items()}


@pytest.mark.parametrize("order", list(SCRIPTS))
def test_estimate_callable_in_both_import_orders(results: dict[str, dict[str, object]],
                                                 order: str) -> None:
    got = results[order]
    assert got["kind"] == "_CallableModule"  # the engine import did rebind the name
    out = got["out"]
    assert isinstance(out, dict)
    assert out["model"] == "Llama 3-8B" and out["gpu"] == "GeForce RTX 4090"
    assert out["fits"] is True and out["error"] is None and out["decode"]["tokens_per_s"] > 0


def test_both_orders_give_the_same_estimate(results: dict[str, dict[str, object]]) -> None:
    assert results["before"]["out"] == results["after"]["out"]
