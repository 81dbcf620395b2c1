"""Bad input gives a 4xx: a friendly HTML page, or the one JSON error shape under /api/."""
from __future__ import annotations

import pytest

HTML_ERRORS = [
    ("/en/models/starcoder-2-15b?context=abc", 400, "whole number"),
    ("/en/models/starcoder-2-15b?context=-5", 400, "between 1 and"),
    ("/en/models/starcoder-2-15b?context=99999999999", 400, "between 1 and"),
    ("/en/models/starcoder-2-15b?min_quality=Q9_X", 400, "unknown quantization"),
    ("/en/models/starcoder-2-15b?min_memory=lots", 400, "number of GiB"),
    ("/en/models/starcoder-2-15b?backend=glide", 400, "unknown backend"),
    ("/en/cards/geforce-rtx-4090?sort=colour", 400, "unknown sort"),
    ("/en/models/no-such-model-xyz", 404, "unknown model"),
    ("/es/cards/no-such-card-xyz", 404, "No conocemos ninguna tarjeta gráfica"),  # in Spanish
    ("/fr/models", 404, "unknown language"),
    ("/fr/models/starcoder-2-15b", 404, "unknown language"),
    ("/en/models?since=soon", 400, "year"),
    ("/en/nothing/here/at/all", 404, "page not found"),
]


@pytest.mark.parametrize(("url", "status", "text"), HTML_ERRORS)
def test_html_errors_are_friendly_pages(client, url: str, status: int, text: str) -> None:
    r = client.get(url)
    assert r.status_code == status
    assert r.headers["content-type"].startswith("text/html")
    assert text in r.text and "Traceback" not in r.text and "<html lang=" in r.text


def test_error_page_speaks_the_page_language(client) -> None:
    r = client.get("/nl/models/no-such-model-xyz")
    assert '<html lang="nl">' in r.text


API_ERRORS = [
    ("/api/v1/models/starcoder-2-15b?context=abc", 400, "bad_context"),
    ("/api/v1/models/starcoder-2-15b?context=0", 400, "bad_context"),
    ("/api/v1/models/starcoder-2-15b?min_quality=Q9", 400, "bad_quality"),
    ("/api/v1/models/starcoder-2-15b?lang=fr", 400, "unknown_language"),
    ("/api/v1/models/nope-nope-nope", 404, "unknown_model"),
    ("/api/v1/cards/nope-nope-nope", 404, "unknown_card"),
    ("/api/v1/estimate?model=starcoder-2-15b", 400, "missing_card"),
    ("/api/v1/estimate?model=starcoder-2-15b&gpu=4090&quant=Q9_Z", 400, "bad_quant"),
    ("/api/v1/estimate?model=starcoder-2-15b&gpu=4090&context=1e9", 400, "bad_context"),
    ("/api/v1/estimate?model=zzzzzz&gpu=4090", 404, "unknown_model"),
    ("/api/v1/nothing", 404, "not_found"),
]


@pytest.mark.parametrize(("url", "status", "code"), API_ERRORS)
def test_api_errors_have_one_shape(client, url: str, status: int, code: str) -> None:
    r = client.get(url)
    assert r.status_code == status
    body = r.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}
    assert body["error"]["code"] == code and body["error"]["message"]


def test_api_method_not_allowed_in_shape(client) -> None:
    r = client.post("/api/v1/models")
    assert r.status_code == 405 and r.json()["error"]["code"] == "method_not_allowed"


def test_unknown_name_suggests_close_ones(client) -> None:
    r = client.get("/en/models/starcoder-2-16b")
    assert r.status_code == 404 and "StarCoder 2 15B" in r.text


def test_unexpected_failure_is_a_friendly_500(client, monkeypatch) -> None:
    from tpscalc.web import reports

    def boom():
        raise RuntimeError("secret internals")

    monkeypatch.setattr(reports, "model_builder", boom)
    r = client.get("/api/v1/models/starcoder-2-15b")
    assert r.status_code == 500 and r.json()["error"]["code"] == "internal_error"
    assert "secret" not in r.text


RIG_ERRORS = [
    "/api/v1/estimate?model=starcoder-2-15b&gpu=3x%20rtx-9999&ram=64",
    "/api/v1/estimate?model=starcoder-2-15b&gpu=geforce-rtx-4090&ram=0",
    "/api/v1/estimate?model=starcoder-2-15b&gpu=geforce-rtx-4090&ram=-1",
    "/api/v1/estimate?model=starcoder-2-15b&gpu=geforce-rtx-4090&n_gpu_layers=-1",
    "/api/v1/estimate?model=starcoder-2-15b&gpu=geforce-rtx-4090&ram=64&os=beos",
]


@pytest.mark.parametrize("url", RIG_ERRORS)
def test_bad_rigs_are_400(client, url: str) -> None:
    r = client.get(url)
    assert r.status_code == 400 and "error" in r.json()


def test_a_rig_estimate(client) -> None:
    r = client.get("/api/v1/estimate", params={"model": "starcoder-2-15b",
                                               "gpu": "2x geforce-rtx-3060-12-gb", "ram": "64",
                                               "quant": "Q4_K_M"})
    assert r.status_code == 200, r.text
    assert len(r.json()["placement"]["devices"]) == 2
