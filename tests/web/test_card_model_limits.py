"""A card page never lists a model as fitting at a context beyond the model's own limit.

StarCoder 2 15B holds at most 16,384 tokens. Asked for more, the card page leaves it out of the
table and the counts and says how many models it left out; with all=1 it is listed, evaluated
at its own limit, and the row says that limit. At the default context a shorter limit lowers
the context instead (as the model page does), and the row says so too. The CLI's card report
is the same report.
"""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

STARCODER = "StarCoder 2 15B"


def test_the_card_page_leaves_out_a_model_past_its_limit(client) -> None:
    short = client.get("/en/cards/h100-sxm5-80-gb?context=16384").text
    assert STARCODER in short  # at its limit it runs
    long = client.get("/en/cards/h100-sxm5-80-gb?context=32768")
    assert long.status_code == 200
    assert STARCODER not in long.text.split('id="faq"')[0]
    assert "1 model holds less than 32,768 tokens of context and is left out" in long.text


def test_show_all_lists_it_at_its_own_limit_and_says_so(client) -> None:
    html = client.get("/en/cards/h100-sxm5-80-gb?context=32768&all=1").text
    row = next(r for r in html.split("<tr") if STARCODER in r)
    assert "max 16,384 tokens" in row


def test_the_json_report_carries_the_limit(client) -> None:
    data = client.get("/api/v1/cards/h100-sxm5-80-gb?context=32768&all=1").json()
    row = next(r for r in data["rows"] if r["model"] == STARCODER)
    assert row["max_context"] == 16384 and row["beyond_model_limit"] is True
    assert data["models_beyond_limit"] == 1
    assert data["models_fit"] == sum(1 for r in data["rows"] if r["fits"]) - 1
    at_limit = client.get("/api/v1/cards/h100-sxm5-80-gb?context=16384").json()
    mine = next(r for r in at_limit["rows"] if r["model"] == STARCODER)
    # evaluated at 16,384 tokens either way: the same memory, not the 32,768-token figure
    assert mine["needs_gib"] == row["needs_gib"] and mine["max_context"] is None


def test_the_default_context_is_lowered_to_a_shorter_limit(
        client, monkeypatch: pytest.MonkeyPatch) -> None:
    from tpscalc.catalog import store
    from tpscalc.web import reports

    models = store.models()  # the web tests' small catalog; StarCoder first
    arch = models[0].architecture.model_copy(update={"max_context": 2048})
    short = models[0].model_copy(update={"architecture": arch})
    monkeypatch.setattr(store, "models", lambda: (short, *models[1:]))
    reports.clear_cache()
    data = client.get("/api/v1/cards/h100-sxm5-80-gb").json()
    row = next(r for r in data["rows"] if r["model"] == STARCODER)
    assert row["max_context"] == 2048 and not row["beyond_model_limit"] and row["fits"]
    assert "max 2,048 tokens" in client.get("/en/cards/h100-sxm5-80-gb").text


def test_the_cli_card_report_says_the_same() -> None:
    from tpscalc.cli.main import app

    runner = CliRunner()
    out = runner.invoke(app, ["card", "H100 SXM5 80 GB", "--context", "32768", "--json"])
    assert out.exit_code == 0
    data = json.loads(out.stdout)
    assert STARCODER not in [r["model"] for r in data["rows"]]
    assert data["models_beyond_limit"] == 1
    table = runner.invoke(app, ["card", "H100 SXM5 80 GB", "--context", "32768", "--all"],
                          env={"COLUMNS": "200"})
    assert "StarCoder 2 15B (max 16,384 tokens)" in table.stdout
    assert "1 model holds less than 32,768 tokens" in " ".join(table.stdout.split())
