"""Ranges that know what they don't know: the novelty tier of a model and its wider range."""
from __future__ import annotations

from dataclasses import replace

import pytest

from tpscalc.estimate.calibration import Band
from tpscalc.estimate.calibration_store import calibration
from tpscalc.estimate.novelty import family_of, kind_of, lower_confidence, tier_of, with_novelty
from tpscalc.estimate.types import DecodeEstimate, PrefillEstimate

MEASURED = ("Llama 2-7B", "Llama 3-70B", "gpt-oss-20b", "Gemma 3 4B")


@pytest.mark.parametrize(("name", "family"), [
    ("Llama 2-13B", "Llama 2"), ("Gemma 3 4B", "Gemma 3"), ("gpt-oss-120b", "gpt-oss"),
    ("Qwen3-30B-A3B", "Qwen3"), ("LLaMA-65B", "LLaMA"), ("Mistral 7B", "Mistral"),
    ("Qwen2.5-Coder-7B", "Qwen2.5-Coder"), ("Phi", "Phi")])
def test_family_is_the_name_without_its_size(name: str, family: str) -> None:
    assert family_of(name) == family


def test_tiers() -> None:
    assert tier_of("Llama 2-7B", MEASURED) == "measured"
    assert tier_of("Llama 2-70B", MEASURED) == "family"
    assert tier_of("gpt-oss-120b", MEASURED) == "family"
    assert tier_of("Mistral 7B", MEASURED) == "novel"


def test_a_catalog_model_is_placed_by_its_layer_kind() -> None:
    from tpscalc.catalog import get_model

    measured = ("Llama 3-8B", "gpt-oss-20b")
    kinds = frozenset({"dense|full", "moe|swa"})
    assert tier_of(get_model("Llama 3-8B"), measured, kinds) == "measured"
    assert tier_of(get_model("Llama 3.1-8B"), measured, kinds) == "family"  # dense, full
    assert tier_of(get_model("gpt-oss-120b"), measured, kinds) == "family"
    assert tier_of(get_model("DeepSeek-V3"), measured, kinds) == "novel"  # latent attention
    assert kind_of(get_model("Qwen3.6-27B").architecture) == "dense|linear"
    assert kind_of(None) is None


def test_confidence_drops_a_level_per_step() -> None:
    assert lower_confidence("high", "measured") == "high"
    assert lower_confidence("high", "family") == "medium"
    assert lower_confidence("high", "novel") == "low"
    assert lower_confidence("low", "family") == "low"


def _estimates() -> tuple[DecodeEstimate, PrefillEstimate]:
    d = DecodeEstimate(100.0, 95.0, 105.0, "high", "bandwidth")
    return d, PrefillEstimate(1000.0, 900.0, 1100.0, 0.5, "compute")


def test_a_novel_model_gets_the_wider_band_and_a_lower_label() -> None:
    cal = replace(calibration(), measured_models=MEASURED)
    d, p = _estimates()
    for name, level in (("Mistral 7B", "low"), ("Llama 2-70B", "medium")):  # names: by family
        d2, p2 = with_novelty(d, p, cal, name, "high", moe=False)
        assert p2 is not None
        assert d2.confidence == level
        assert d2.low <= d.low and d2.high >= d.high
        assert (d2.high - d2.low) > (d.high - d.low)  # the fitted tier bands are wider
        assert p2.low <= p.low and p2.high >= p.high


def test_a_measured_model_or_a_measurement_keeps_its_range() -> None:
    cal = replace(calibration(), measured_models=MEASURED)
    d, p = _estimates()
    assert with_novelty(d, p, cal, "Llama 2-7B", "high", moe=False) == (d, p)
    held = replace(d, measured=101.0)
    assert with_novelty(held, p, cal, "Mistral 7B", "high", moe=False) == (held, p)


def test_a_range_is_never_narrowed() -> None:
    narrow = {"novel|high": Band(0.99, 1.01), "high": Band(0.9, 1.1)}
    cal = replace(calibration(), measured_models=MEASURED, decode_bands=narrow,
                  prefill_bands=narrow)
    d, p = _estimates()
    d2, p2 = with_novelty(d, p, cal, "Mistral 7B", "high", moe=False)
    assert (d2.low, d2.high) == (d.low, d.high) and p2 == p


def test_the_committed_calibration_holds_the_tier_bands() -> None:
    cal = calibration()
    assert cal.measured_models and "Llama 2-7B" in cal.measured_models
    assert "dense|full" in cal.measured_kinds and "moe|swa" in cal.measured_kinds
    for bands in (cal.decode_bands, cal.prefill_bands):
        for tier in ("family-out", "novel"):
            assert any(k.startswith(f"{tier}|") for k in bands)
