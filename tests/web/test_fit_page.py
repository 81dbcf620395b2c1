"""The site's "what would make it fit" (issue 27) and its "which runtime is fastest here" FAQ
(issue 25), in the three languages."""
from __future__ import annotations

import re

import pytest

WAYS = {"en": ("does not fit on", "on 2x GeForce RTX 3060 12 GB", "GB of system RAM"),
        "es": ("no cabe en", "en 2x GeForce RTX 3060 12 GB", "GB de RAM del sistema"),
        "nl": ("past niet op", "op 2x GeForce RTX 3060 12 GB", "GB systeem-RAM")}
# StarCoder 2 15B at Q6_K or better is over a 12 GB card (Q8_0 ~16 GB, Q6_K ~12.3 GB)
NOT_FITTING = "/fit/starcoder-2-15b/geforce-rtx-3060-12-gb?min_quality=Q6_K"


def text_of(html: str) -> str:
    main = html.split("<main", 1)[1].split("</main>", 1)[0]
    return " ".join(re.sub(r"<[^>]+>", " ", main).split())


@pytest.mark.parametrize("lang", ["en", "es", "nl"])
def test_a_model_that_does_not_fit_lists_what_would_with_speeds(client, lang: str) -> None:
    r = client.get(f"/{lang}{NOT_FITTING}")
    assert r.status_code == 200 and f'<html lang="{lang}">' in r.text
    page = text_of(r.text)
    for words in WAYS[lang]:
        assert words in page
    ways = r.text.split('<ul class="ways">', 1)[1].split("</ul>", 1)[0]
    assert ways.count("<li>") == 3  # a lower quantization, a second card, system RAM
    assert all(re.search(r"\d tok/s", li) for li in ways.split("<li>")[1:])


def test_the_page_keeps_the_settings_it_was_reached_with(client) -> None:
    plain = text_of(client.get("/en/fit/starcoder-2-15b/geforce-gtx-1650").text)
    ollama = text_of(client.get("/en/fit/starcoder-2-15b/geforce-gtx-1650?runtime=ollama").text)
    assert "Figures for llama.cpp" in plain and "Figures for ollama" in ollama
    with_ram = text_of(client.get("/en/fit/starcoder-2-15b/geforce-gtx-1650?ram=64").text)
    assert "part of the model in system RAM" in with_ram  # it runs, with part in RAM


@pytest.fixture()
def with_qwen3_moe(monkeypatch: pytest.MonkeyPatch) -> None:
    """The web tests' small catalog plus the real catalog's Qwen3-30B-A3B, which pages on a
    4 GB card with 16 GB of RAM at the quality floor."""
    from tpscalc.catalog import store
    from tpscalc.web import reports

    small = store.models()  # the web tests' catalog
    qwen = next(m for m in store.validated_models() if m.slug == "qwen3-30b-a3b")
    monkeypatch.setattr(store, "models", lambda: (*small, qwen))
    reports.clear_cache()


@pytest.mark.usefixtures("with_qwen3_moe")
def test_a_pair_that_pages_says_so_and_what_would_not(client) -> None:  # type: ignore[no-untyped-def]
    """Qwen3-30B-A3B (the catalog's) on a 4 GB card with 16 GB of RAM pages at the quality
    floor: the page says it runs only by paging, and lists the changes that run without it."""
    page = client.get("/nl/fit/qwen3-30b-a3b/geforce-gtx-1650?ram=16")
    assert page.status_code == 200
    text = text_of(page.text)
    assert "opnieuw van de schijf te lezen" in text and "Wat zonder pagineren draait" in text
    assert "Het past" not in text
    ways = page.text.split('<ul class="ways">', 1)[1].split("</ul>", 1)[0]
    assert ways.count("<li>") >= 1 and "IQ4_XS" not in ways


@pytest.mark.usefixtures("with_qwen3_moe")
def test_a_pair_that_pages_with_no_way_out_says_nothing_runs_it_without_paging(
        client, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A paging answer none of the changes rescues: the page says that nothing runs it
    without paging, not that nothing makes it fit (it runs, by paging)."""
    from tpscalc.web import fit_page

    real = fit_page.fit_way_texts
    monkeypatch.setattr(fit_page, "fit_way_texts",
                        lambda answer, lang: (real(answer, lang)[0], []))
    text = text_of(client.get("/es/fit/qwen3-30b-a3b/geforce-gtx-1650?ram=16").text)
    assert "volviendo a leer del disco" in text
    assert "Nada de esto lo hace funcionar sin paginar" in text
    assert "Nada de esto hace que quepa" not in text


def test_a_pair_that_fits_says_so(client) -> None:
    page = text_of(client.get("/en/fit/tiny-chat-1b/geforce-rtx-4090").text)
    assert "It fits" in page and "does not fit" not in page


@pytest.mark.parametrize(("path", "status"), [
    ("/en/fit/starcoder-2-15b/geforce-gtx-1650?context=abc", 400),
    ("/en/fit/starcoder-2-15b/geforce-gtx-1650?depth=8192", 400),  # not a field of this page
    ("/en/fit/starcoder-2-15b/no-such-card", 404),
    ("/en/fit/no-such-model/geforce-gtx-1650", 404),
    ("/xx/fit/starcoder-2-15b/geforce-gtx-1650", 404),
])
def test_bad_input_is_a_friendly_page(client, path: str, status: int) -> None:
    r = client.get(path)
    assert r.status_code == status and r.headers["content-type"].startswith("text/html")
    assert "Traceback" not in r.text


def test_does_not_fit_rows_link_to_the_fit_page_with_the_page_settings(client) -> None:
    html = client.get("/es/cards/geforce-gtx-1650?all=1&runtime=ollama").text
    links = re.findall(r'<a class="fit-ways" href="([^"]+)">([^<]+)</a>', html)
    assert links and all(text == "Qué haría que cupiera" for _, text in links)
    href = links[0][0].replace("&amp;", "&")
    assert href.startswith("/es/fit/") and href.endswith("/geforce-gtx-1650?runtime=ollama")
    assert client.get(href).status_code == 200
    model_page = client.get("/en/models/starcoder-2-15b?all=1").text
    assert '/en/fit/starcoder-2-15b/geforce-gtx-1650"' in model_page
    fitting = re.findall(r'<tr class="fit-(?:comfortable|tight)">.*?</tr>', model_page,
                         re.DOTALL)
    assert fitting and not any("fit-ways" in row for row in fitting)


def test_the_static_export_has_no_fit_links(client) -> None:
    from tpscalc.report.request import parse_request
    from tpscalc.web.pages import card_page

    request = parse_request({"all": "1"}, ("all",))
    html = card_page("geforce-gtx-1650", request, "/en/cards/geforce-gtx-1650", export=True)
    assert "fit-ways" not in html and "fit-no" in html


@pytest.mark.parametrize(("lang", "question"), [
    ("en", "which runtime runs it fastest on the"),
    ("es", "qué runtime lo ejecuta más rápido en la"),
    ("nl", "welke runtime draait het het snelst op de"),
])
def test_model_and_card_pages_ask_which_runtime_is_fastest(client, lang: str,
                                                           question: str) -> None:
    for path in (f"/{lang}/models/starcoder-2-15b", f"/{lang}/cards/h100-sxm5-80-gb"):
        html = client.get(path).text
        faq = html.split('id="faq"', 1)[1]
        asked = re.search(rf"<summary>([^<]*{question}[^<]*)</summary><p>([^<]+)</p>", faq)
        assert asked, path
        answer = asked.group(2)
        assert len(re.findall(r"tok/s", answer)) >= 2  # at least two runtimes, ranked
        assert "vLLM" in answer and "llama.cpp" in answer
