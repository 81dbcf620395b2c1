"""The JSON API: lists, reports (the same object the HTML renders), estimate, OpenAPI."""
from __future__ import annotations

import pytest

MODEL_KEYS = {"model", "context", "min_quality", "cards_total", "cards_fit", "smallest", "fastest",
              "median_tokens_per_s", "reading_speed_cards", "rows", "fastest_ten", "smallest_cards",
              "faq", "notes", "memory_breakdown", "context_curve"}
ROW_KEYS = {"gpu", "slug", "vendor", "memory_gib", "bandwidth_gb_s", "release_date", "needs_gib",
            "quant", "fit", "decode", "prefill"}


def test_model_list_and_filters(client) -> None:
    body = client.get("/api/v1/models").json()
    assert body["count"] == 3 and {m["slug"] for m in body["models"]} >= {"starcoder-2-15b"}
    assert client.get("/api/v1/models?organization=bigcode").json()["count"] == 1
    assert client.get("/api/v1/models?max_params=2").json()["models"][0]["slug"] == "tiny-chat-1b"


def test_card_list_and_filters(client) -> None:
    assert client.get("/api/v1/cards").json()["count"] == 5
    body = client.get("/api/v1/cards?vendor=nvidia&min_memory=20").json()
    assert [c["slug"] for c in body["cards"]] == ["h100-sxm5-80-gb", "geforce-rtx-4090"]


def test_model_report_keys(client) -> None:
    body = client.get("/api/v1/models/starcoder-2-15b").json()
    assert MODEL_KEYS <= set(body)
    assert body["rows"] and ROW_KEYS <= set(body["rows"][0])
    assert set(body["rows"][0]["decode"]) >= {
        "tokens_per_s", "low", "high", "confidence", "bound", "measured"
    }


def test_model_report_follows_query(client) -> None:
    default = client.get("/api/v1/models/starcoder-2-15b").json()
    wide = client.get("/api/v1/models/starcoder-2-15b?context=16384&all=1&lang=es").json()
    assert default["context"] == 4096 and wide["context"] == 16384
    assert len(wide["rows"]) == wide["cards_total"] == 5
    assert wide["faq"][0]["question"] != default["faq"][0]["question"]  # Spanish


def test_card_report(client) -> None:
    body = client.get("/api/v1/cards/geforce-rtx-3060-12-gb?sort=size").json()
    assert body["card"]["slug"] == "geforce-rtx-3060-12-gb" and body["sort"] == "size"
    assert body["models_total"] == 3


def test_estimate(client) -> None:
    body = client.get("/api/v1/estimate", params={"model": "StarCoder 2 15B", "gpu": "4090",
                                                  "quant": "q4_k_m", "context": "8192"}).json()
    assert body["quant"] == "Q4_K_M" and body["context"] == 8192 and body["fits"] is True
    assert body["memory"]["total_gib"] > body["memory"]["weights_gib"] > 0
    assert body["error"] is None


ESTIMATE_BASE = {"model": "StarCoder 2 15B", "gpu": "4090", "quant": "q4_k_m"}


def _speeds(body: dict) -> tuple:
    """The figures a speed-test field can move: both speeds, the test run and the memory."""
    return (body["decode"]["tokens_per_s"], body["prefill"]["tokens_per_s"], body["test"],
            body["memory"]["total_gib"])


# Each speed-test field the estimate route documents changes its answer (issue 27: the route
# used to unpack the request and leave these out, so `&depth=8192` gave the depth-0 answer).
@pytest.mark.parametrize(("name", "value"), [
    ("depth", "8192"), ("n_prompt", "64"), ("n_gen", "16"), ("flash_attn", "0"),
    ("n_ubatch", "64"),
])
def test_estimate_takes_each_speed_test_field(client, name: str, value: str) -> None:
    base = client.get("/api/v1/estimate", params=ESTIMATE_BASE)
    changed = client.get("/api/v1/estimate", params={**ESTIMATE_BASE, name: value})
    assert base.status_code == changed.status_code == 200
    assert _speeds(changed.json()) != _speeds(base.json())


def test_estimate_matches_the_python_api_with_a_depth(client) -> None:
    from tpscalc import api

    body = client.get("/api/v1/estimate", params={**ESTIMATE_BASE, "depth": "8192"}).json()
    direct = api.evaluate_many([{**ESTIMATE_BASE, "card": "4090", "depth": 8192}])[0]
    assert body["decode"] == direct["decode"] and body["context"] == direct["context"] >= 8192


def test_html_and_api_render_the_same_report(client) -> None:
    from tpscalc.estimate.query import Query
    from tpscalc.report.request import ReportRequest
    from tpscalc.web import reports

    api = client.get("/api/v1/models/starcoder-2-15b?context=8192").json()
    assert api == reports.model_report("starcoder-2-15b", ReportRequest(Query(context=8192)))


@pytest.mark.parametrize("path", ["/api/v1/models", "/api/v1/cards", "/api/v1/models/{slug}",
                                  "/api/v1/cards/{slug}", "/api/v1/estimate"])
def test_openapi_lists_routes(client, path: str) -> None:
    assert path in client.get("/openapi.json").json()["paths"]


@pytest.mark.parametrize(("params", "code"), [
    ({"ram_type": "DDR9-100"}, "bad_ram_type"), ({"pcie": "4x3"}, "bad_pcie"),
    ({"ram_type": "DDR5-6000", "ram_channels": "99"}, "bad_ram_channels"),
])
def test_estimate_rejects_bad_ram_type_and_pcie(client, params: dict[str, str], code: str) -> None:
    response = client.get("/api/v1/estimate", params={"model": "StarCoder 2 15B",
                                                      "gpu": "geforce-rtx-4090", "ram": "64",
                                                      **params})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == code


def test_estimate_takes_ram_type_and_pcie(client) -> None:
    body = client.get("/api/v1/estimate", params={
        "model": "StarCoder 2 15B", "gpu": "geforce-gtx-1650", "ram": "64",
        "ram_type": "DDR5-6000", "ram_channels": "2", "pcie": "3x16"}).json()
    assert body["fit"] == "offload" and body["decode"]["tokens_per_s"] > 0


def test_estimate_unknown_cpu_is_a_400_with_suggestions(client) -> None:
    response = client.get("/api/v1/estimate", params={"model": "StarCoder 2 15B", "gpu": "none",
                                                      "ram": "64", "cpu": "Ryzen 9 7955"})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "unknown_cpu" and "closest" in error["message"]


def test_estimate_takes_a_cpu(client) -> None:
    body = client.get("/api/v1/estimate", params={"model": "StarCoder 2 15B", "gpu": "none",
                                                  "ram": "64", "cpu": "Ryzen 9 7950X"}).json()
    assert body["fit"] == "cpu" and body["gpu"] == "CPU only (Ryzen 9 7950X)"
    assert body["decode"]["bound"] == "ram_bandwidth"


def test_model_report_is_gzipped_for_a_client_that_accepts_gzip(client) -> None:
    plain = client.get("/api/v1/models/starcoder-2-15b", headers={"Accept-Encoding": "identity"})
    packed = client.get("/api/v1/models/starcoder-2-15b", headers={"Accept-Encoding": "gzip"})
    assert "content-encoding" not in plain.headers
    assert packed.headers["content-encoding"] == "gzip"
    assert "accept-encoding" in packed.headers["vary"].lower()
    assert packed.json() == plain.json()  # httpx undoes the gzip; the report is the same
    assert int(packed.headers["content-length"]) < len(plain.content) / 3


@pytest.mark.parametrize("encoding", ["identity", "gzip"])
@pytest.mark.parametrize("path", ["/api/v1/models/starcoder-2-15b",
                                  "/api/v1/cards/geforce-rtx-4090"])
def test_report_etag_and_if_none_match(client, path: str, encoding: str) -> None:
    first = client.get(path, headers={"Accept-Encoding": encoding})
    tag = first.headers["etag"]
    assert first.status_code == 200 and tag.startswith('"')
    again = client.get(path, headers={"Accept-Encoding": encoding, "If-None-Match": tag})
    assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == tag
    other = client.get(path + "?context=8192", headers={"If-None-Match": tag})
    assert other.status_code == 200 and other.headers["etag"] != tag  # another report


def test_estimate_takes_a_runtime(client) -> None:  # type: ignore[no-untyped-def]
    ok = client.get("/api/v1/estimate?model=StarCoder 2 15B&card=4090&runtime=llamafile")
    assert ok.status_code == 200 and ok.json()["runtime"] == "llamafile"
    refused = client.get("/api/v1/estimate?model=StarCoder 2 15B&card=4090&runtime=mlx")
    assert refused.status_code == 400
    assert "MLX runs on Apple" in refused.json()["error"]["message"]


def test_estimate_names_the_variant_a_chip_name_was_read_as(client, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from tpscalc.catalog import store
    from tpscalc.catalog.schema import Card

    # one chip in two GPU configurations (the catalog's Apple M4 Max entries, cut down)
    chips = tuple(Card(name=f"Apple M4 Max ({cores}-core GPU)", slug=f"apple-m4-max-{cores}",
                       vendor="Apple", memory_gib=memory, bandwidth_gb_s=bandwidth,
                       release_date="2024-10-01", kind="unified", unified_memory=True)
                  for cores, memory, bandwidth in ((32, 36, 410), (40, 128, 546)))
    monkeypatch.setattr(store, "cards", lambda: chips)
    body = client.get("/api/v1/estimate?model=tiny-chat-1b&card=M4%20Max&runtime=mlx").json()
    assert body["gpu"] == "Apple M4 Max (32-core GPU)" and body["quant"] == "MLX-4bit"
    assert "Apple M4 Max (40-core GPU)" in " ".join(body["notes"])
    exact = client.get("/api/v1/estimate?model=tiny-chat-1b&card=apple-m4-max-40").json()
    assert exact["gpu"] == "Apple M4 Max (40-core GPU)" and "notes" not in exact


def test_estimate_takes_ngl_999_as_all_layers(client) -> None:
    """-ngl 999 (llama.cpp: every layer) is not refused; the placement counts the real ones."""
    body = client.get("/api/v1/estimate", params={**ESTIMATE_BASE, "ram": "64",
                                                  "n_gpu_layers": "999"})
    assert body.status_code == 200, body.text
    assert body.json()["placement"]["n_gpu_layers"] == 41  # StarCoder 2 15B: 40 layers + the output


def test_estimate_states_the_host_it_assumed(client) -> None:
    """The RAM a model's CPU part may take is the RAM less the OS's headroom: a given headroom
    that leaves too little for StarCoder 2 15B's dense CPU part makes it "does not fit" (every
    token would re-read it from storage), and the answer says which OS and headroom it used."""
    base = {"model": "StarCoder 2 15B", "gpu": "geforce-gtx-1650", "ram": "20",
            "quant": "q4_k_m"}
    roomy = client.get("/api/v1/estimate", params={**base, "ram_headroom": "0"}).json()
    short = client.get("/api/v1/estimate", params={**base, "ram_headroom": "16",
                                                   "os": "windows"}).json()
    assert roomy["fit"] == "offload" and roomy["host"]["usable_ram_gib"] == 20
    assert roomy["host"]["os"] == "linux" and roomy["host"]["os_assumed"] is True
    assert short["fit"] == "no" and short["host"]["usable_ram_gib"] == 4
    assert short["host"]["os"] == "windows" and short["host"]["os_assumed"] is False


@pytest.mark.parametrize(("params", "code"), [
    ({"os": "beos"}, "bad_os"), ({"ram_headroom": "-2"}, "bad_memory"),
    ({"storage_read": "0"}, "bad_storage_read"), ({"gpu_memory": "0"}, "bad_gpu_memory")])
def test_estimate_rejects_bad_host_options(client, params: dict[str, str], code: str) -> None:
    response = client.get("/api/v1/estimate", params={**ESTIMATE_BASE, "ram": "64", **params})
    assert response.status_code == 400 and response.json()["error"]["code"] == code


def test_openapi_documents_the_host_options(client) -> None:
    spec = client.get("/openapi.json").json()
    names = {p["name"] for p in spec["paths"]["/api/v1/estimate"]["get"]["parameters"]}
    assert {"os", "ram_headroom", "gpu_memory", "storage_read"} <= names


def test_estimate_knows_a_laptop_cpu(client) -> None:
    body = client.get("/api/v1/estimate", params={"model": "StarCoder 2 15B", "gpu": "none",
                                                  "ram": "64", "cpu": "Ryzen 7 7840HS"})
    assert body.status_code == 200, body.text
    assert body.json()["gpu"] == "CPU only (Ryzen 7 7840HS)"
