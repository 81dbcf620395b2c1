"""The Python API in a fresh interpreter.

`tpscalc.evaluate(...)` loads what it needs on first use.
"""
from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = ("import sys, json, tpscalc\n"
          "light = 'numpy' not in sys.modules\n"
          "out = tpscalc.evaluate('Llama 3-8B', 'RTX 4090')\n"
          "import tpscalc.estimate.engine\n"
          "again = tpscalc.evaluate('Llama 3-8B', 'RTX 4090')\n"
          "print(json.dumps({'light': light, 'out': out, 'same': out == again}))\n")


def test_evaluate_in_a_fresh_interpreter() -> None:
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got["light"], "import tpscalc loaded numpy"
    out = got["out"]
    assert out["model"] == "Llama 3-8B" and out["gpu"] == "GeForce RTX 4090"
    assert out["fits"] is True and out["error"] is None and out["decode"]["tokens_per_s"] > 0
    assert got["same"]


def test_the_engine_package_is_a_plain_package() -> None:
    import tpscalc.estimate

    assert not callable(tpscalc.estimate)


def test_evaluate_takes_the_host_options() -> None:
    """The Python API parses the same host fields (by name or attribute name) as the CLI."""
    from tpscalc import api

    out = api.evaluate("Qwen3-30B-A3B", "GeForce GTX 1650 SUPER", "Q4_K_S", ram=16,
                       n_cpu_moe=48, os="windows", storage_read_gb_s=3.0)
    assert out["fit"] == "paging" and out["host"]["os"] == "windows"
    assert out["host"]["paging"]["storage_read_gb_s"] == 3.0
    roomy = api.evaluate("Qwen3-30B-A3B", "GeForce GTX 1650 SUPER", "Q4_K_S", ram=16,
                         n_cpu_moe=48, ram_headroom_gib=0)
    assert roomy["fit"] == "offload" and roomy["host"]["usable_ram_gib"] == 16
