"""The serving parts of the reports: the card report's users column (users_at), the model
report's serving curve, and the chart drawn from it."""
from __future__ import annotations

from tpscalc import api
from tpscalc.report.serialize import report_json
from tpscalc.web.views import serving_svg


def test_card_report_has_a_users_column_when_asked() -> None:
    data = report_json(api.card_report("4090", users_at=20, search="Llama 3.1-8B"))
    assert data["users_at"] == 20.0
    rows = [r for r in data["rows"] if r["fits"]]
    assert rows and all(isinstance(r["users"], int) and r["users"] >= 1 for r in rows)
    plain = report_json(api.card_report("4090", search="Llama 3.1-8B"))
    assert "users_at" not in plain and all("users" not in r for r in plain["rows"])


def test_a_faster_target_serves_fewer_users() -> None:
    slow = report_json(api.card_report("4090", users_at=10, search="Llama 3.1-8B"))
    fast = report_json(api.card_report("4090", users_at=60, search="Llama 3.1-8B"))
    for a, b in zip(slow["rows"], fast["rows"], strict=True):
        assert a["users"] >= b["users"]


def test_model_report_serving_curve() -> None:
    curve = report_json(api.model_report("Llama 3.1-8B"))["serving_curve"]
    assert [p["parallel"] for p in curve][:3] == [1, 2, 4]
    agg = [p["aggregate_tokens_per_s"] for p in curve]
    per = [p["per_user_tokens_per_s"] for p in curve]
    assert agg == sorted(agg) and per == sorted(per, reverse=True)
    svg = str(serving_svg(curve, "en"))
    assert svg.startswith("<svg") and "20 tok/s each" in svg and "stroke-dasharray" in svg
    assert str(serving_svg([], "en")) == ""
