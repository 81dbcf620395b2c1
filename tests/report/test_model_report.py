"""The model report against the fake engine (tests/report/report_fakes.py: hand-worked numbers)."""
from __future__ import annotations

import json

import pytest
import report_fakes as fakes

from tpscalc.api import model_report, report_json
from tpscalc.report.request import RequestError

pytestmark = pytest.mark.usefixtures("fake_catalog")


def test_rows_fastest_first_newest_first_on_ties() -> None:
    report = model_report("Test Coder 8B")
    assert [r.card.name for r in report.rows] == [
        "Alpha 24", "Beta 24", "Delta 4", "Gamma 6", "Zeta 12", "Eta 16"]
    assert [r.estimate.quant for r in report.rows][:4] == ["Q8_0", "Q8_0", "Q2_K", "Q4_K_M"]
    assert report.rows[0].tokens_per_s == pytest.approx(125.0)


def test_counts_and_headline_cards() -> None:
    s = model_report("test-coder-8b").summary
    assert (s.cards_total, s.cards_fit) == (7, 6)
    assert s.smallest is not None and s.smallest.card.name == "Delta 4"
    assert s.smallest.tokens_per_s == pytest.approx(100.0)
    assert s.fastest is not None and s.fastest.card.name == "Alpha 24"
    assert s.median_tokens_per_s == pytest.approx(100.0)  # median of 125,125,100,100,37.5,6.25
    assert s.reading_speed_cards == 5  # all but Eta 16 at 6.25 tok/s
    assert s.quant_levels == ("Q8_0", "Q4_K_M", "Q2_K")  # ladder order


def test_closest_miss_and_show_all() -> None:
    report = model_report("Test Coder 8B", show_all=True)
    last = report.rows[-1]
    assert last.card.name == "Epsilon 2" and not last.estimate.fits
    # needs 1.8626 (Q2_K weights) + 1 (KV) + 0.5 = 3.3626 GiB on a 2 GiB card
    assert last.estimate.short_by_gib == pytest.approx(1.3626, abs=1e-3)
    row = report_json(report)["rows"][-1]
    assert row["short_by_gib"] == pytest.approx(1.3626, abs=1e-3) and row["decode"] is None


def test_min_quality_floor_drops_cards_that_only_fit_below_it() -> None:
    s = model_report("Test Coder 8B", min_quality="q4_k_m").summary
    assert s.request.query.min_quality == "Q4_K_M"
    assert s.cards_fit == 5
    assert s.smallest is not None and s.smallest.card.name == "Gamma 6"


@pytest.mark.parametrize(("opts", "shown"), [
    ({"search": "alpha"}, ["Alpha 24"]),
    ({"min_memory_gib": 13}, ["Alpha 24", "Beta 24", "Eta 16"]),
    ({"max_memory_gib": 6}, ["Delta 4", "Gamma 6"]),
])
def test_filters_change_rows_not_counts(opts: dict[str, object], shown: list[str]) -> None:
    report = model_report("Test Coder 8B", **opts)
    assert [r.card.name for r in report.rows] == shown
    assert report.summary.cards_fit == 6


def test_faq_sizes_name_the_fastest_card_of_each_size() -> None:
    faq = {t.title: t.body for t in model_report("Test Coder 8B").faq}
    assert "Zeta 12" in faq["Test Coder 8B: can I run it on a GPU with 12 GB?"]
    assert "Eta 16" in faq["Test Coder 8B: can I run it on a GPU with 16 GB?"]
    answer24 = faq["Test Coder 8B: can I run it on a GPU with 24 GB?"]
    assert "Alpha 24" in answer24 and "125 tokens" in answer24 and "comfortable" in answer24
    assert "1.4 GiB" in faq["Test Coder 8B: can I run it if it does not fit my GPU?"]
    assert "3 quantization levels (Q8_0, Q4_K_M, Q2_K)" in faq[
        "Test Coder 8B: why does the quantization differ between cards?"]
    assert "https://huggingface.co/acme/test-coder-8b" in faq[
        "Test Coder 8B: where can I download it?"]
    assert "3.9 × 10²³ FLOP" in faq["Test Coder 8B: how much compute was used to train it?"]
    which = faq["Test Coder 8B: which quantization should I use on a 16 GB card?"]
    assert "Eta 16" in which and "KL divergence" in which and "--min-tps" in which
    assert "llama-server --parallel" in faq[
        "Which card serves 10 users of Test Coder 8B at 20 tok/s each?"]
    assert len(faq) == 19


def test_record_sections_label_and_join_values() -> None:
    sections = {s.title: {f.name: f.value for f in s.fields}
                for s in model_report("Test Coder 8B").record}
    assert sections["Origin"]["Country"] == "United States of America"  # duplicates merged
    assert sections["Training compute"]["Training compute"] == "3.9 × 10²³ FLOP"
    assert sections["Availability"]["Weights"] == "Yes"


def test_explanations_and_kv_points() -> None:
    report = model_report("Test Coder 8B")
    titles = [t.title for t in report.explanations]
    assert titles[0] == "Dense model"
    assert "approximated" in report.explanations[1].body
    # no architecture: 4k and 32k only; KV is 1 GiB per 4096 tokens in the fake
    kv = [(p.context, p.memory.kv_cache_gib) for p in report.summary.kv_points]
    assert kv == [(4096, 1.0), (32768, 8.0)]
    assert len(report.guide) == 6


def test_context_curve_covers_fastest_and_typical_card() -> None:
    curve = model_report("Test Coder 8B").context_curve
    roles = {(p.role, p.gpu) for p in curve}
    assert ("fastest", "Alpha 24") in roles
    assert any(role == "typical" for role, _ in roles)
    alpha = [p for p in curve if p.gpu == "Alpha 24"]
    assert [p.context for p in alpha] == [2048, 4096, 8192, 16384, 32768]
    assert alpha[-1].needs_gib == pytest.approx(8e9 / 2**30 + 8 + 0.5)


PINNED_KEYS = {
    "model", "context", "min_quality", "cards_total", "cards_fit", "smallest", "fastest",
    "median_tokens_per_s", "reading_speed_cards", "rows", "fastest_ten", "smallest_cards", "faq",
    "notes", "memory_breakdown", "context_curve"}
ROW_KEYS = {"gpu", "slug", "vendor", "memory_gib", "bandwidth_gb_s", "release_date", "needs_gib",
            "quant", "fit", "decode", "prefill"}


def test_json_keys_are_pinned() -> None:
    data = report_json(model_report("Test Coder 8B", show_all=True))
    json.dumps(data)  # serialisable as is
    assert PINNED_KEYS <= set(data)
    assert {"name", "slug", "organization", "parameters", "publication_date", "hf_repo",
            "architecture", "record"} <= set(data["model"])
    for key in ("smallest", "fastest"):
        assert {"gpu", "memory_gib", "quant", "decode_tokens_per_s"} <= set(data[key])
    assert all(ROW_KEYS <= set(r) for r in data["rows"])
    assert set(data["rows"][0]["decode"]) == {"tokens_per_s", "low", "high", "confidence",
                                               "bound", "measured"}
    assert all({"question", "answer"} == set(f) for f in data["faq"])
    assert data["fastest"]["gpu"] == "Alpha 24" and data["smallest"]["quant"] == "Q2_K"
    assert len(data["fastest_ten"]) == 6 and data["smallest_cards"][0]["gpu"] == "Delta 4"


@pytest.mark.parametrize(("opts", "message"), [
    ({"context": 0}, "context must be between"),
    ({"context": 20_000_000}, "context must be between"),
    ({"min_quality": "Q4_KX"}, "unknown quantization"),
    ({"lang": "fr"}, "unknown language"),
])
def test_bad_options_raise_input_errors(opts: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        model_report("Test Coder 8B", **opts)


def test_unknown_model_lists_closest_names() -> None:
    from tpscalc.catalog import NameNotFoundError

    with pytest.raises(NameNotFoundError) as info:
        model_report("Test Codr 8B")
    assert "Test Coder 8B" in info.value.suggestions


def test_report_input_error_is_a_value_error() -> None:
    assert issubclass(RequestError, ValueError)


@pytest.mark.parametrize("lang", ["es", "nl"])
def test_other_languages_build_and_format_numbers(lang: str) -> None:
    data = report_json(model_report(fakes.MODEL.name, lang=lang))
    assert data["lang"] == lang and len(data["faq"]) == 19


def test_accuracy_answer_quotes_the_calibration_band(monkeypatch: pytest.MonkeyPatch) -> None:
    from tpscalc.estimate.calibration import Band
    from tpscalc.report import faq

    monkeypatch.setattr(faq, "_calibration_band", lambda confidence: Band(0.62, 1.41, n=37))
    answers = {t.title: t.body for t in model_report("Test Coder 8B").faq}
    text = answers["Test Coder 8B: how accurate are these speed estimates?"]
    assert "37 llama.cpp measurements" in text and "0.62 and 1.41 times" in text
    assert "75–200 tok/s on Alpha 24" in text
    # the fastest's own range as ratios of its estimate (its band may be a class's or a
    # condition's, not the level's quoted beside it)
    d = model_report("Test Coder 8B").summary.fastest.estimate.decode
    ratios = f"{d.low / d.tokens_per_s:.2f} to {d.high / d.tokens_per_s:.2f} times our estimate"
    assert ratios in text
