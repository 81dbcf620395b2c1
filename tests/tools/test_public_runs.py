"""benchmarks/public_runs.py reads the public run logs' tags as their README defines them and
counts a row inside its range only when the measurement lies between the range's ends."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import public_runs

from tpscalc.catalog import get_card, get_model

ROW = {"context_or_depth": "0", "ttft_s": "", "backend": ""}


def test_tags_are_keys_and_values_after_the_run_id() -> None:
    tags = public_runs._tags("cmr123;tool=llama-bench;p=2048;n=128;d=0;e2e")
    assert tags == {"tool": "llama-bench", "p": "2048", "n": "128", "d": "0", "e2e": ""}


def test_the_decode_depth_counts_the_prompt_before_it() -> None:
    assert public_runs._depth(ROW, {"p": "2048", "d": "4096"}) == 6144
    assert public_runs._depth({**ROW, "context_or_depth": "512"}, {}) == 512


def test_a_row_without_a_backend_takes_its_makers_usual_one() -> None:
    assert public_runs._backend(ROW, get_card("GeForce RTX 3090")) == "cuda"
    assert public_runs._backend(ROW, get_card("Apple M4 Pro (20-core GPU)")) == "metal"
    assert public_runs._backend(ROW, get_card("Radeon RX 7900 XTX")) is None  # ROCm or Vulkan
    assert public_runs._backend({**ROW, "backend": "Vulkan"},
                                get_card("Radeon RX 7900 XTX")) == "vulkan"


def test_other_formats_than_gguf_types_are_left_out() -> None:
    assert public_runs._quant("q4_k_m") == "Q4_K_M"
    assert public_runs._quant("NVFP4") is None


def _run(measured: float) -> public_runs.Run:
    return public_runs.Run(get_card("GeForce RTX 3090"), get_model("Llama 3.1-8B"), "cuda",
                           "llama-bench", "Q4_K_M", 0, measured, 100.0, 90.0, 110.0, "high")


def test_coverage_counts_the_rows_between_the_ends() -> None:
    table = public_runs.error_table([_run(100.0), _run(95.0), _run(120.0), _run(80.0)])
    row = next(line for line in table.splitlines() if line.startswith("| all |"))
    assert row.endswith("| 50% | 4 |")
