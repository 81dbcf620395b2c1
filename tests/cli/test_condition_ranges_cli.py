"""`tpscalc estimate` on a measured card asked for a condition none of its measured rows hold
(a MoE's decode, a cache >= 16k tokens deep; a prompt at such a depth): the range holds the
calibration's condition-out band and the decode's label drops to "medium"; the same card's
plain decode and prompt keep their own (real catalog and calibration)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from tpscalc.catalog import get_card
from tpscalc.estimate.calibration_store import calibration


def _estimate(*args: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "tpscalc", "estimate", *args, "--json"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def _decode(*args: str) -> dict[str, Any]:
    decode: dict[str, Any] = _estimate(*args)["decode"]
    return decode


def _cuda_card_without(condition: str, prefill: bool = False) -> str:
    """A CUDA card with a level of its own whose decode rows (with `prefill`, prompt rows)
    never hold `condition`."""
    cal = calibration()
    conditions = cal.prefill_conditions if prefill else cal.decode_conditions
    return next(key.partition(":")[2] for key, held in conditions.items()
                if key.startswith("cuda:") and condition not in held
                and (cal.devices[key].prefill_efficiency if prefill
                     else cal.devices[key].decode_efficiency) is not None
                and get_card(key.partition(":")[2]).memory_gib >= 24)


@pytest.mark.parametrize(("condition", "args"), [
    ("moe", ("--model", "Qwen3-30B-A3B", "--quant", "Q4_K_M")),
    ("deep", ("--model", "Llama 3.1-8B", "--quant", "Q4_K_M", "--context", "40000",
              "--depth", "32768"))])
def test_a_measured_card_asked_for_an_unmeasured_condition_is_medium_and_holds_its_band(
        condition: str, args: tuple[str, ...]) -> None:
    card = _cuda_card_without(condition)
    band = calibration().decode_bands[f"condition-out|{condition}|cuda"]
    decode = _decode(*args, "--gpu", card)
    assert decode["confidence"] == "medium"
    assert decode["low"] <= decode["tokens_per_s"] * band.low_ratio * 1.0001
    assert decode["high"] >= decode["tokens_per_s"] * band.high_ratio * 0.9999
    plain = _decode("--model", "Llama 3.1-8B", "--quant", "Q4_K_M", "--gpu", card)
    assert plain["confidence"] == "high"


def test_a_measured_cards_prompt_at_an_unmeasured_depth_holds_the_prompt_band() -> None:
    cal, card = calibration(), _cuda_card_without("deep", prefill=True)
    band = (cal.prefill_bands.get("condition-out|deep|cuda")
            or cal.prefill_bands["condition-out|deep"])
    model = ("--model", "Llama 3.1-8B", "--quant", "Q4_K_M", "--gpu", card)
    deep = _estimate(*model, "--context", "40000", "--depth", "32768")["prefill"]
    assert deep["low"] <= deep["tokens_per_s"] * band.low_ratio * 1.0001
    assert deep["high"] >= deep["tokens_per_s"] * band.high_ratio * 0.9999
    plain = _estimate(*model)["prefill"]
    assert plain["high"] / plain["tokens_per_s"] < band.high_ratio
