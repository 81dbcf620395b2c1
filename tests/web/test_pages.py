"""Every HTML route renders, in every language, from the same report the API returns."""
from __future__ import annotations

import re

import pytest

from tpscalc.i18n import LANGUAGES

PAGES = ["/{lang}/models", "/{lang}/cards", "/{lang}/credits", "/{lang}/models/starcoder-2-15b",
         "/{lang}/cards/geforce-rtx-4090", "/{lang}/models/tiny-chat-1b",
         "/{lang}/cards/geforce-gtx-1650"]


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("page", PAGES)
def test_page_renders_in_language(client, page: str, lang: str) -> None:
    r = client.get(page.format(lang=lang))
    assert r.status_code == 200
    assert f'<html lang="{lang}">' in r.text
    assert r.headers["content-type"].startswith("text/html")


@pytest.mark.parametrize(("header", "lang"), [("es-ES,es;q=0.9,en;q=0.8", "es"), ("nl", "nl"),
                                              ("fr-FR, de;q=0.5", "en"),
                                              ("fr, nl;q=0.4, es;q=0.7", "es"), ("", "en")])
def test_root_redirects_by_accept_language(client, header: str, lang: str) -> None:
    r = client.get("/", headers={"Accept-Language": header}, follow_redirects=False)
    assert r.status_code == 307 and r.headers["location"] == f"/{lang}/models"


def test_language_root_redirects(client) -> None:
    assert client.get("/nl", follow_redirects=False).headers["location"] == "/nl/models"


def test_model_page_shows_the_report_rows_in_order(client) -> None:
    report = client.get("/api/v1/models/starcoder-2-15b").json()
    html = client.get("/en/models/starcoder-2-15b").text
    names = re.findall(r'<td><a href="/en/cards/([a-z0-9-]+)">', html)
    assert names == [r["slug"] for r in report["rows"]]
    assert len(names) == report["cards_fit"] > 0
    for section in ("The extremes", "What the numbers mean", "Full record", "How to choose a GPU",
                    "common questions", "Looking at it from the other side?"):
        assert section in html
    # breakdown, memory/context, speed/context, serving (users at once), decode/depth,
    # prefill/depth, speed/memory
    assert html.count("<svg") == 7
    for item in report["faq"]:
        assert item["question"].replace("'", "&#39;") in html


def test_model_page_controls_change_the_table(client) -> None:
    base = client.get("/en/models/starcoder-2-15b").text
    long = client.get("/en/models/starcoder-2-15b?context=16384&all=1").text
    assert "Does not fit" not in base and "Does not fit" in long
    assert 'value="16384" selected' in long


def test_model_page_offers_only_contexts_the_model_holds(client) -> None:
    """StarCoder 2 15B's config holds 16,384 tokens: the control stops there."""
    html = client.get("/en/models/starcoder-2-15b").text
    assert 'value="16384"' in html and 'value="32768"' not in html


@pytest.mark.parametrize("path", ["/en/models/starcoder-2-15b?context=32768",
                                  "/api/v1/models/starcoder-2-15b?context=32768",
                                  ("/api/v1/estimate?model=starcoder-2-15b&card=rtx-4090"
                                   "&context=32768")])
def test_a_context_beyond_the_model_is_refused(client, path: str) -> None:
    r = client.get(path, headers={"accept": "application/json"})
    assert r.status_code == 400 and "16,384" in r.text


def test_partial_returns_only_the_results(client) -> None:
    r = client.get("/en/models/starcoder-2-15b?partial=1&context=8192")
    assert r.status_code == 200 and "<html" not in r.text and 'id="results-table"' in r.text


def test_numbers_in_locale_format(client) -> None:
    assert "1,008" in client.get("/en/cards").text
    assert "1.008" in client.get("/es/cards").text and "1.008" in client.get("/nl/cards").text


def test_language_switcher_keeps_the_page(client) -> None:
    html = client.get("/es/models/starcoder-2-15b").text
    assert 'href="/en/models/starcoder-2-15b"' in html
    assert 'href="/nl/models/starcoder-2-15b"' in html


def test_card_page_links_the_other_direction(client) -> None:
    html = client.get("/en/cards/geforce-rtx-4090").text
    assert 'href="/en/models/starcoder-2-15b"' in html and "24.0 GiB" in html


def test_name_redirects_to_canonical_slug(client) -> None:
    r = client.get("/en/cards/4090", follow_redirects=False)
    assert r.status_code == 308 and r.headers["location"] == "/en/cards/geforce-rtx-4090"


@pytest.mark.parametrize(("url", "present", "absent"), [
    ("/en/models?organization=microsoft", "WizardCoder", "StarCoder"),
    ("/en/models?min_params=10&max_params=15.2", "StarCoder", "Tiny Chat"),
    ("/en/models?since=2024", "Tiny Chat", "WizardCoder"),
    ("/en/cards?vendor=AMD", "7900 XTX", "RTX 4090"),
    ("/en/cards?min_memory=20&max_memory=30", "RTX 4090", "GTX 1650"),
    ("/en/cards?search=3060", "RTX 3060", "RTX 4090"),
])
def test_indexes_filter(client, url: str, present: str, absent: str) -> None:
    html = client.get(url).text
    assert present in html and absent not in html


def test_security_headers(client) -> None:
    r = client.get("/en/models/starcoder-2-15b")
    csp = r.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert "frame-ancestors 'none'" in csp
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["x-frame-options"] == "DENY" and r.headers["referrer-policy"] == "same-origin"


def test_no_inline_script_or_style(client) -> None:
    html = client.get("/en/models/starcoder-2-15b").text
    assert re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html) is None
    assert "<style" not in html and " style=" not in html and " onclick=" not in html


def test_search_text_is_escaped(client) -> None:
    evil = '<script>alert(1)</script>'
    for url in ("/en/models/starcoder-2-15b", "/en/cards/geforce-rtx-4090", "/en/models",
                "/en/cards"):
        html = client.get(url, params={"search": evil}).text
        assert evil not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_static_files_served(client) -> None:
    assert "fetch(" in client.get("/static/app.js").text
    assert client.get("/static/style.css").status_code == 200


def test_head_answers_like_get_without_a_body(client) -> None:  # type: ignore[no-untyped-def]
    get = client.get("/en/models")
    head = client.head("/en/models")
    assert head.status_code == get.status_code == 200
    assert head.content == b""
    assert head.headers["content-type"] == get.headers["content-type"]


def test_rig_controls_work_as_a_plain_get_form(client) -> None:
    """Without JavaScript the "cards" and "system RAM" selects are query-string fields: the page
    shows them chosen, an offloaded row its split, and the pager keeps them."""
    page = client.get("/en/models/starcoder-2-15b?gpus=2&ram=64&all=1")
    assert page.status_code == 200
    html = page.text
    assert '<option value="2" selected>2</option>' in html
    assert '<option value="64" selected>64</option>' in html
    assert "% in RAM" in html and "Offload" in html  # the GTX 1650 pair offloads
    alone = client.get("/en/models/starcoder-2-15b?all=1").text
    assert "% in RAM" not in alone
    es = client.get("/es/cards/geforce-gtx-1650?ram=64").text
    assert "RAM del sistema (GiB)" in es and "en la RAM" in es
    assert client.get("/en/models/starcoder-2-15b?ram=0").status_code == 400
    assert client.get("/en/models/starcoder-2-15b?gpus=99").status_code == 400


def test_a_rig_page_names_the_rig_and_keeps_offload_apart(client) -> None:
    import re

    html = client.get("/en/models/starcoder-2-15b?gpus=2&ram=64").text
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))
    assert "2x GeForce RTX 4090 + 64 GB RAM" in text
    held = int(re.search(r"(\d+) rigs hold it all in GPU memory", text).group(1))
    offload = int(re.search(r"(\d+) more run it only with part of it in system RAM", text)
                  .group(1))
    rows = client.get("/api/v1/models/starcoder-2-15b?gpus=2&ram=64").json()["rows"]
    assert held == sum(r["fit"] in ("comfortable", "tight") for r in rows)
    assert offload == sum(r["fit"] in ("offload", "cpu") for r in rows)
    plain = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", client.get(
        "/en/models/starcoder-2-15b").text))
    assert "cards can run it" in plain and "2x" not in plain and "GB RAM" not in plain
