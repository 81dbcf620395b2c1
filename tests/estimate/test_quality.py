"""The quality estimate (estimate/quality.py) and the quant choice by preference (fit.py)."""
from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

from tpscalc.catalog import get_model
from tpscalc.estimate.fit import choose_by_preference
from tpscalc.estimate.quality import estimate_quality, top1_agree_pct, words_for
from tpscalc.estimate.quality_store import model_quality, quality_fit

DATA = Path(__file__).resolve().parents[2] / "data" / "measured" / "quality_kld.csv"


def test_every_data_row_cites_a_source() -> None:
    rows = list(csv.DictReader(DATA.open(encoding="utf-8")))
    assert len(rows) >= 50
    assert all(r["source_url"].startswith("https://") for r in rows)
    assert all(r["kld_mean"] or r["ppl_ratio"] for r in rows)


@pytest.mark.parametrize(("quant", "measured_kld"), [
    # llama.cpp tools/perplexity/README.md, LLaMA 3 8b Scoreboard (no imatrix rows but Q4_K_M
    # WT 10m): the fit must land within its own published leave-one-model-out range
    ("Q8_0", 0.001355), ("Q6_K", 0.005452), ("Q4_K_M", 0.028152), ("Q3_K_M", 0.084358),
])
def test_llama3_8b_within_published_range(quant: str, measured_kld: float) -> None:
    q = model_quality(get_model("Llama 3-8B"), quant)
    assert q is not None and q.basis == "fit"
    assert q.kld_low <= measured_kld <= q.kld_high


def test_kld_falls_with_bits_and_size() -> None:
    fit = quality_fit()
    small = [estimate_quality(fit, "X", b, 8).kld for b in (2.5, 4.0, 5.5, 8.5)]
    assert small == sorted(small, reverse=True)
    assert estimate_quality(fit, "X", 4.5, 70).kld < estimate_quality(fit, "X", 4.5, 7).kld


def test_native_and_unquantized_are_lossless() -> None:
    fit = quality_fit()
    native = estimate_quality(fit, "Q4_0", 4.6, 27, native_bpw=4.6)
    assert (native.kld, native.basis, native.words) == (0.0, "native", "lossless")
    assert estimate_quality(fit, "F16", 16, 8).basis == "unquantized"
    below = estimate_quality(fit, "IQ3_XXS", 3.3, 27, native_bpw=4.6)
    assert below.basis == "fit" and below.kld > 0


def test_top1_follows_llama_scoreboard() -> None:
    # LLaMA 3 8B Q4_K_M: KLD 0.031273, same top p 91.901 % (tools/perplexity/README.md)
    assert top1_agree_pct(quality_fit(), 0.031273) == pytest.approx(91.9, abs=1.5)
    assert top1_agree_pct(quality_fit(), 0.0) == 100.0


@pytest.mark.parametrize(("kld", "words"), [(0.002, "virtually lossless"),
                                            (0.03, "near-lossless"), (0.1, "slight loss"),
                                            (0.4, "noticeable"), (1.5, "severe")])
def test_words(kld: float, words: str) -> None:
    assert words_for(kld) == words


KLDS = [0.001, 0.005, 0.03, 0.1]  # least compressed first
SPEEDS = [20.0, 28.0, 35.0, 41.0]


@pytest.mark.parametrize(("prefer", "min_tps", "index"), [
    (None, None, 0), ("quality", None, 0), ("speed", None, 3), ("balanced", None, 2),
    (None, 30.0, 2), (None, 25.0, 1), (None, 50.0, 3), ("speed", 25.0, 3),
])
def test_choose_by_preference(prefer: str | None, min_tps: float | None, index: int) -> None:
    assert choose_by_preference(KLDS, SPEEDS, prefer, min_tps) == index


def test_choose_skips_what_does_not_fit() -> None:
    assert choose_by_preference(KLDS, [None, None, 35.0, 41.0], None, None) == 2
    assert choose_by_preference(KLDS, [None] * 4, "speed", None) == -1
    assert not math.isnan(quality_fit().median_abs_factor)
