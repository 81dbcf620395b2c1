"""The model page's speed-against-depth charts and the report's `depth_curve` (issue 11).

Decode and prompt speeds after 0, 4k, 8k, … cached tokens, up to the model's limit, for the
fastest card, the typical one and the fastest Apple one; computed by the engine with
llama-bench's pp512 / tg128 at -d depth.
"""
from __future__ import annotations

import gzip

import pytest

from tpscalc.catalog import store
from tpscalc.catalog.schema import Card
from tpscalc.web import reports

APPLE = Card(name="Apple M2 Max (38-core GPU)", slug="apple-m2-max-38-core-gpu", vendor="Apple",
             memory_gib=96, bandwidth_gb_s=400, release_date="2023-01-17", kind="other")


@pytest.fixture()
def with_apple(monkeypatch: pytest.MonkeyPatch) -> None:
    cards = store.cards()
    monkeypatch.setattr(store, "cards", lambda: (*cards, APPLE))
    reports.clear_cache()


def test_the_json_report_has_a_depth_curve_up_to_the_model_limit(client, with_apple) -> None:
    data = client.get("/api/v1/models/starcoder-2-15b").json()
    curve = data["depth_curve"]
    by_card: dict[str, list[dict]] = {}
    for p in curve:
        by_card.setdefault(p["gpu"], []).append(p)
    roles = {p["role"] for p in curve}
    assert "fastest" in roles and "apple" in roles and len(by_card) <= 3
    assert by_card[APPLE.name][0]["role"] == "apple"
    assert by_card[data["fastest"]["gpu"]][0]["role"] == "fastest"
    for points in by_card.values():
        # StarCoder 2 holds 16,384 tokens: the chart stops at its limit
        assert [p["depth"] for p in points] == [0, 4096, 8192, 16384]
        speeds = [p["decode_tokens_per_s"] for p in points if p["fits"]]
        prompt = [p["prefill_tokens_per_s"] for p in points
                  if p["fits"] and p["prefill_tokens_per_s"] is not None]  # needs the FLOPS
        assert speeds and speeds == sorted(speeds, reverse=True) and speeds[0] > speeds[-1]
        assert prompt == sorted(prompt, reverse=True)
    assert any(p["prefill_tokens_per_s"] for p in curve)


def test_the_depth_curve_uses_the_rows_quantization(client) -> None:
    data = client.get("/api/v1/models/starcoder-2-15b?context=8192").json()
    fastest = data["fastest"]
    points = [p for p in data["depth_curve"] if p["gpu"] == fastest["gpu"]]
    assert {p["quant"] for p in points if p["fits"]} == {fastest["quant"]}


def test_the_depth_curve_is_computed_on_the_pages_rig(client) -> None:
    """With "cards: 2" the rows are two-card rigs, and so are the chart's points."""
    one = client.get("/api/v1/models/starcoder-2-15b").json()
    two = client.get("/api/v1/models/starcoder-2-15b?gpus=2").json()
    gpu = two["fastest"]["gpu"]
    speeds = {n: [p["decode_tokens_per_s"] for p in data["depth_curve"]
                  if p["gpu"] == gpu and p["fits"]] for n, data in ((1, one), (2, two))}
    assert speeds[2] and speeds[1] and len(speeds[1]) == len(speeds[2])
    # at depth 0 the point is the row's own two-card speed (the tests differ a little: tg128)
    assert two["fastest"]["decode_tokens_per_s"] == pytest.approx(speeds[2][0], rel=0.05)
    assert speeds[2] != speeds[1]


@pytest.mark.parametrize(("lang", "title"), [
    ("en", "Generation speed against depth"),
    ("es", "Velocidad de generación según la profundidad"),
    ("nl", "Generatiesnelheid tegen diepte"),
])
def test_the_model_page_draws_both_depth_charts(client, with_apple, lang: str,
                                                title: str) -> None:
    r = client.get(f"/{lang}/models/starcoder-2-15b")
    assert r.status_code == 200
    html = r.text
    assert f'aria-label="{title}"' in html
    assert html.count("<svg") >= 6  # breakdown, context ×2, depth ×2, speed/memory
    chart = html[html.index(f'aria-label="{title}"'):]
    chart = chart[:chart.index("</svg>")]
    for label in ("0", "4k", "8k", "16k"):
        assert f">{label}</text>" in chart
    assert "32k" not in chart and "Apple M2 Max" in chart  # three cards: the legend names them
    assert len(gzip.compress(r.content)) <= 60_000


def test_the_curve_follows_the_cards_that_fit_not_the_table_filter(client) -> None:
    data = client.get("/api/v1/models/starcoder-2-15b?min_memory=1000").json()
    assert not data["rows"] and data["depth_curve"]


def test_no_card_fits_no_depth_chart(client) -> None:
    data = client.get("/api/v1/models/wizardcoder-15-5b?context=999999").json()
    assert data["fastest"] is None and data["depth_curve"] == []
    html = client.get("/en/models/wizardcoder-15-5b?context=999999").text
    assert "Generation speed against depth" not in html
