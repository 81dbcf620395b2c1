"""The card report against the fake engine (hand-worked numbers in report_fakes.py)."""
from __future__ import annotations

import pytest

from tpscalc.api import card_report, report_json

pytestmark = pytest.mark.usefixtures("fake_catalog")


def test_counts_biggest_fastest() -> None:
    # Zeta 12 (12 GiB, 300 GB/s): Tiny 1B at Q8_0 (300 tok/s), Test Coder 8B at Q8_0 (37.5);
    # Huge 70B needs 70e9 × 2/8 B = 16.3 GiB + 1.5 at Q2_K: short by 5.8 GiB.
    report = card_report("Zeta 12")
    assert (report.models_total, report.models_fit, report.reading_speed_models) == (3, 2, 2)
    assert report.biggest is not None and report.biggest.model.name == "Test Coder 8B"
    assert report.fastest is not None and report.fastest.tokens_per_s == pytest.approx(300.0)
    assert [r.model.name for r in report.rows] == ["Test Coder 8B", "Tiny 1B"]  # largest first


@pytest.mark.parametrize(("sort", "order"), [
    ("speed", ["Tiny 1B", "Test Coder 8B", "Huge 70B"]),
    ("size", ["Test Coder 8B", "Tiny 1B", "Huge 70B"]),
    ("date", ["Test Coder 8B", "Tiny 1B", "Huge 70B"]),
])
def test_sort_orders_with_misses_last(sort: str, order: list[str]) -> None:
    report = card_report("Zeta 12", sort=sort, show_all=True)
    assert [r.model.name for r in report.rows] == order
    miss = report_json(report)["rows"][-1]
    assert miss["short_by_gib"] == pytest.approx(70e9 / 4 / 2**30 + 1.5 - 12)


def test_json_shape() -> None:
    data = report_json(card_report("alpha-24", search="tiny"))
    assert {"card", "context", "min_quality", "models_total", "models_fit", "biggest", "rows",
            "faq", "notes"} <= set(data)
    assert data["card"]["name"] == "Alpha 24"
    assert [r["model"] for r in data["rows"]] == ["Tiny 1B"]
    row_keys = {"model", "slug", "needs_gib", "quant", "fit", "decode", "prefill", "quality"}
    assert row_keys <= set(data["rows"][0])
    assert len(data["faq"]) == 4  # the fourth: bigger model compressed more, or smaller?
    assert "KL divergence" in data["faq"][3]["answer"]


@pytest.mark.parametrize(("opts", "message"), [
    ({"sort": "price"}, "unknown sort"),
    ({"context": -5}, "context must be between"),
])
def test_bad_options(opts: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        card_report("Zeta 12", **opts)
