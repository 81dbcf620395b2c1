"""`tpscalc estimate --depth/--n-prompt/...` and `--input` with llama-bench columns
(real catalog)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tpscalc", "estimate", *args, "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_depth_and_prompt_options() -> None:
    done = _run(
        "--model",
        "Llama 2-7B",
        "--gpu",
        "RTX 4090",
        "--quant",
        "Q4_K_M",
        "--context",
        "40000",
        "--depth",
        "32768",
        "--n-prompt",
        "2048",
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["test"] == {
        "n_prompt": 2048,
        "n_gen": 40000,
        "depth": 32768,
        "flash_attn": True,
        "n_ubatch": 512,
    }


def test_input_with_llama_bench_columns(tmp_path: Path) -> None:
    path = tmp_path / "bench.csv"
    path.write_text(
        "model,gpu,quant,backend,n_prompt,n_gen,depth,flash_attn,n_ubatch\n"
        "Llama 2-7B,Radeon AI PRO R9700,Q4_0,rocm,512,0,0,1,512\n"
        "Llama 2-7B,Radeon AI PRO R9700,Q4_0,rocm,0,32,32768,1,512\n"
        "Llama 2-7B,Radeon AI PRO R9700,Q4_0,rocm,0,32,-5,1,512\n"
    )
    done = _run("--input", str(path))
    assert done.returncode == 3, done.stderr  # the last row fails; the others print
    rows = json.loads(done.stdout)
    assert rows[0]["test"]["n_prompt"] == 512 and rows[0]["error"] is None
    assert rows[1]["test"]["depth"] == 32768 and rows[1]["context"] >= 32768 + 32
    assert rows[1]["decode"]["tokens_per_s"] < rows[0]["decode"]["tokens_per_s"]
    assert "depth" in rows[2]["error"]
