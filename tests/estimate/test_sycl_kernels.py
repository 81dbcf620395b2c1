"""SYCL's reordered decode kernels (sycl_kernels.py): which types a build reorders, what the
others cost, and that the engine, the rig path and the columns charge it on Intel GPUs only."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tpscalc.catalog import get_card, get_model
from tpscalc.catalog.schema import Architecture
from tpscalc.estimate import engine, speed
from tpscalc.estimate.calibration_store import calibration
from tpscalc.estimate.novelty import model_tier, tier_band, with_novelty
from tpscalc.estimate.query import Query, Rig
from tpscalc.estimate.sycl_kernels import (
    UNREORDERED_SLOWDOWN_SMALL_BLOCK,
    UNREORDERED_SLOWDOWN_SUPER_BLOCK,
    kernel_read_factors,
    read_factors,
    reordered,
    unreordered_slowdown,
)
from tpscalc.estimate.types import DecodeEstimate
from tpscalc.report.common import estimate_json


def _arch(name: str) -> Architecture:
    arch = get_model(name).architecture
    assert arch is not None
    return arch


def test_a_type_counts_reordered_from_its_pull_request_on() -> None:
    assert reordered("Q4_K", expert=False)
    assert not reordered("Q2_K", expert=False, date="2026-07-09")  # DMMV reorder: 2026-07-12
    assert reordered("Q2_K", expert=False, date="2026-08-01")
    assert not reordered("Q4_K", expert=True, date="2026-06-01")  # MUL_MAT_ID: 2026-06-16
    assert reordered("Q4_K", expert=True)
    assert not reordered("Q8_0", expert=True)  # experts: only Q4_K, Q5_K, Q6_K
    assert not reordered("IQ3_S", expert=False)
    assert not reordered("Q4_K", expert=False, date="2025-06-01")  # off by default then


def test_the_slowdown_follows_the_block_size() -> None:
    assert unreordered_slowdown("Q5_0") == UNREORDERED_SLOWDOWN_SMALL_BLOCK
    assert unreordered_slowdown("MXFP4") == UNREORDERED_SLOWDOWN_SMALL_BLOCK
    assert unreordered_slowdown("IQ3_XXS") == UNREORDERED_SLOWDOWN_SUPER_BLOCK
    assert unreordered_slowdown("F16") == 1.0


def test_the_factor_weighs_each_type_by_the_bytes_a_token_reads() -> None:
    llama = _arch("Llama 3.1-8B")
    assert read_factors(llama, "Q4_K_M")[0] == 1.0  # Q4_K and Q6_K: both reordered
    iq = read_factors(llama, "IQ3_XS")[0]
    assert 1.5 < iq < UNREORDERED_SLOWDOWN_SUPER_BLOCK  # the Q6_K output head is reordered
    # 4480-wide rows are no multiple of 256: llama-quantize falls back to Q5_0 there
    assert read_factors(_arch("NVIDIA-Nemotron-Nano-9B-v2"), "Q4_K_M")[0] > 2.0
    # gpt-oss: MXFP4 experts unreordered, Q8_0 attention reordered
    gpt_oss = read_factors(_arch("gpt-oss-20b"), "MXFP4_MOE")[0]
    assert 1.5 < gpt_oss < UNREORDERED_SLOWDOWN_SMALL_BLOCK
    assert read_factors(_arch("Qwen3-30B-A3B"), "Q4_K_M")[0] == 1.0
    assert read_factors(_arch("Qwen3-30B-A3B"), "Q4_K_M", date="2026-06-01")[0] > 1.5
    assert kernel_read_factors(llama, "IQ3_XS", "vulkan") == (1.0, 1.0)
    assert kernel_read_factors(llama, "MLX-4bit", "sycl") == (1.0, 1.0)  # not a GGUF type
    # the range's slow end: super-blocks at the small blocks' slowdown too
    fast, slowest = kernel_read_factors(llama, "IQ3_XS", "sycl")
    assert fast == iq and slowest > 1.5 * iq
    assert kernel_read_factors(llama, "Q4_K_M", "sycl") == (1.0, 1.0)


def test_the_factor_slows_intel_cards_only() -> None:
    cal = calibration()
    arc, rtx = get_card("Arc B580"), get_card("RTX 4090")
    plain = speed.decode_estimates(4e9, 0.0, 32, [arc, rtx], "sycl", cal)
    slowed = speed.decode_estimates(4e9, 0.0, 32, [arc, rtx], "sycl", cal, read_factor=2.0)
    assert slowed[0].tokens_per_s < 0.7 * plain[0].tokens_per_s
    assert slowed[1].tokens_per_s == plain[1].tokens_per_s
    wider = speed.decode_estimates(4e9, 0.0, 32, [arc, rtx], "sycl", cal, read_factor=2.0,
                                   read_factor_slowest=3.0)
    assert wider[0].tokens_per_s == slowed[0].tokens_per_s
    assert wider[0].high == slowed[0].high and wider[0].low < 0.8 * slowed[0].low
    assert wider[1] == plain[1]


def test_the_slowest_ratio_is_the_estimate_at_the_slowest_factor() -> None:
    cal = calibration()
    arc, rtx = get_card("Arc B580"), get_card("RTX 4090")
    wider = speed.decode_estimates(4e9, 0.0, 32, [arc, rtx], "sycl", cal, read_factor=2.0,
                                   read_factor_slowest=3.0)
    at_slowest = speed.decode_estimates(4e9, 0.0, 32, [arc], "sycl", cal, read_factor=3.0)
    assert wider[0].slowest_ratio == pytest.approx(
        at_slowest[0].tokens_per_s / wider[0].tokens_per_s)
    assert wider[0].slowest_ratio < 0.8
    assert wider[1].slowest_ratio == 1.0  # no reorder on an NVIDIA card


def test_a_novel_models_range_sits_on_the_slowest_kernels() -> None:
    """with_novelty's tier band: its low end on the slowest-kernels estimate, as the measured
    band's (the 70B Q2_K / IQ3_XS files of the Arc Pro B70 run near it)."""
    cal = calibration()
    model = get_model("Marin 8B")  # not measured itself: its tier's band applies
    tier = model_tier(model, cal)
    assert tier != "measured"
    band = tier_band(cal.decode_bands, "high", tier)
    assert band is not None
    plain = DecodeEstimate(100.0, 90.0, 110.0, "high", "bandwidth")
    slow = DecodeEstimate(100.0, 45.0, 110.0, "high", "bandwidth", None, 0.5)
    d_plain, _ = with_novelty(plain, None, cal, model, "high", False)
    d_slow, _ = with_novelty(slow, None, cal, model, "high", False)
    assert d_plain.low == pytest.approx(min(90.0, 100.0 * band.low_ratio))
    assert d_slow.low == pytest.approx(min(45.0, 50.0 * band.low_ratio))
    assert d_slow.high == d_plain.high and d_slow.slowest_ratio == 0.5


def _decode(card: str, model: str, quant: str, backend: str, rig: Rig | None = None) -> float:
    est = engine.estimate(get_model(model), rig or Rig.of(get_card(card)),
                          Query(backend=backend), quant)
    assert est.fits and est.decode is not None
    return est.decode.tokens_per_s


def test_under_sycl_an_unreordered_quant_decodes_slower_than_a_larger_reordered_one() -> None:
    # IQ4_XS is smaller than Q4_K_M: faster under Vulkan, slower under SYCL (not reordered)
    args = ("Arc B580", "Llama 3.1-8B")
    assert _decode(*args, "IQ4_XS", "vulkan") > _decode(*args, "Q4_K_M", "vulkan")
    assert _decode(*args, "IQ4_XS", "sycl") < 0.8 * _decode(*args, "Q4_K_M", "sycl")


@pytest.mark.parametrize("quant", ["IQ4_XS", "Q4_K_M"])
def test_a_one_device_rig_charges_it_as_the_single_card_does(quant: str) -> None:
    model, card = get_model("Llama 3.1-8B"), get_card("Arc B580")
    assert model.architecture is not None
    rig = Rig((card,), n_gpu_layers=model.architecture.num_layers + 1)
    query = Query(backend="sycl")
    alone = engine.estimate(model, Rig.of(card), query, quant)
    as_rig = engine.estimate(model, rig, query, quant)
    assert estimate_json(alone) == estimate_json(as_rig)


def test_the_cli_shows_it() -> None:
    def run(quant: str) -> float:
        done = subprocess.run(
            [sys.executable, "-m", "tpscalc", "estimate", "--model", "Llama 3.1-8B", "--gpu",
             "Arc B580", "--quant", quant, "--backend", "sycl", "--json"],
            capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        value: float = json.loads(done.stdout)["decode"]["tokens_per_s"]
        return value

    assert run("IQ4_XS") < 0.8 * run("Q4_K_M")
