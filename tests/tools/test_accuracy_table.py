"""The protocols table of benchmarks/accuracy.py names every group whose ranges hold under 75 % of
its rows (issue 24: at least 75 % inside in every group)."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import accuracy
from calibration_data import Obs

from tpscalc.catalog.schema import Card

CARD = Card(name="G0", slug="g0", vendor="NVIDIA", memory_gib=24, bandwidth_gb_s=900,
            architecture="Ampere", tflops_fp16_dense=90)


def _rows(inside: int, outside: int) -> list[tuple[Obs, float, float, float, str]]:
    o = Obs(card=CARD, backend="cuda", model="Llama 2-7B", quant="Q4_0", kind="decode",
            test="tg128", tokens_per_s=100.0, era=2, read_bytes=4e9, kv_bytes=0.0, n_layers=32,
            is_moe=False, flops_per_token=1e10, prompt_tokens=512, quantized=True,
            source="synthetic", size_gib=None, from_main_csv=False,
            bytes_source="architecture", weights_bytes=4e9, params_total=8e9,
            kv_bytes_per_token=0.0)
    return ([(o, 100.0, 90.0, 110.0, "high")] * inside
            + [(o, 100.0, 120.0, 130.0, "high")] * outside)


def test_groups_under_the_floor_are_named_with_their_protocol() -> None:
    table = accuracy.protocol_table({"device": _rows(9, 1), "file": _rows(6, 4)})
    tail = table.split("under 75 % inside: ", 1)[1]
    assert "decode, all, leave one file out: 60 % (10)" in tail
    assert "leave one device out" not in tail  # 90 % inside


def test_no_group_under_the_floor_says_none() -> None:
    table = accuracy.protocol_table({"device": _rows(10, 0)})
    assert table.endswith("under 75 % inside: none.")
