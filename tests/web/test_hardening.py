"""The web defects the hardening probe found, each reproduced: headers, redirects, limits, echo."""
from __future__ import annotations

import asyncio
import json
import logging

import pytest

from tpscalc.web.guard import SECURITY_HEADERS, Guard, Limits


@pytest.mark.parametrize("path", ["/en/models/starcoder-2-15b", "/api/v1/models/nope",
                                  "/en/nothing", "/healthz", "/static/style.css"])
def test_security_headers_everywhere_and_no_server_header(client, path: str) -> None:
    r = client.get(path)
    for name in SECURITY_HEADERS:
        assert name in r.headers, (path, name)
    assert "server" not in r.headers and r.headers["x-request-id"]


def test_security_headers_on_a_500(client, monkeypatch: pytest.MonkeyPatch) -> None:
    from tpscalc.web import reports

    def broken(*_args: object) -> object:
        raise RuntimeError("boom")

    monkeypatch.setattr(reports, "model_builder", lambda: broken)
    r = client.get("/api/v1/models/starcoder-2-15b")
    assert r.status_code == 500 and r.json()["error"]["code"] == "internal_error"
    assert r.headers["permissions-policy"] and r.headers["cross-origin-opener-policy"]


def test_trailing_slash_redirect_is_relative_and_ignores_host(client) -> None:
    r = client.get("/en/models/starcoder-2-15b/?context=8192", headers={"Host": "evil.example"},
                   follow_redirects=False)
    assert r.status_code == 308
    assert r.headers["location"] == "/en/models/starcoder-2-15b?context=8192"


def test_canonical_redirect_keeps_the_query(client) -> None:
    r = client.get("/en/models/StarCoder%202%2015B?context=8192&all=1", follow_redirects=False)
    assert r.status_code == 308
    assert r.headers["location"] == "/en/models/starcoder-2-15b?context=8192&all=1"


def test_405_names_the_allowed_methods(client) -> None:
    r = client.post("/api/v1/models")
    assert r.status_code == 405 and "GET" in r.headers["allow"]
    assert r.json()["error"]["code"] == "method_not_allowed"


def test_error_pages_echo_a_short_excerpt(client) -> None:
    page = client.get(f"/en/models/{'x' * 1800}")
    api = client.get(f"/api/v1/models/{'y' * 1800}")
    huge = client.get(f"/en/models/{'z' * 60_000}")
    assert page.status_code == 404 and page.text.count("x" * 100) <= 1
    assert api.status_code == 404 and len(api.content) < 1_000
    assert huge.status_code == 414 and len(huge.content) < 1_000


def test_long_url_and_large_headers_are_refused(client) -> None:
    assert client.get("/en/models/" + "a" * 3000).status_code == 414
    r = client.get("/healthz", headers={"x-junk": "j" * 9000})
    assert r.status_code == 431


def test_healthz(client) -> None:
    r = client.get("/healthz")
    assert r.status_code == 200 and r.json() == {"status": "ok"}


def test_access_log_is_one_json_line_with_the_request_id(client, caplog) -> None:
    with caplog.at_level(logging.INFO, logger="tpscalc.access"):
        r = client.get("/healthz", headers={"X-Request-Id": "probe-42"})
    assert r.headers["x-request-id"] == "probe-42"
    line = json.loads(caplog.records[-1].getMessage())
    assert line["request_id"] == "probe-42" and line["status"] == 200 and line["path"] == "/healthz"


def _call(
    app: Guard, path: str = "/api/v1/x"
) -> tuple[list[dict[str, object]], asyncio.Task[None]]:
    sent: list[dict[str, object]] = []

    async def receive() -> dict[str, object]:
        await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": path, "raw_path": path.encode(),
             "query_string": b"", "headers": []}
    return sent, asyncio.ensure_future(app(scope, receive, send))  # type: ignore[arg-type]


def test_over_the_in_flight_limit_gets_503_with_retry_after() -> None:
    release = asyncio.Event()

    async def slow(scope, receive, send) -> None:  # type: ignore[no-untyped-def]
        await release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    async def scenario() -> tuple[list[dict[str, object]], list[dict[str, object]]]:
        guard = Guard(slow, Limits(max_in_flight=1, queue_wait_s=0.05))
        first, task1 = _call(guard)
        await asyncio.sleep(0.01)
        second, task2 = _call(guard)
        await task2
        release.set()
        await task1
        return first, second

    first, second = asyncio.run(scenario())
    assert first[0]["status"] == 200
    assert second[0]["status"] == 503
    assert (b"retry-after", b"1") in second[0]["headers"]  # type: ignore[operator]


def test_past_the_deadline_gets_503_and_the_work_is_cancelled() -> None:
    cancelled = asyncio.Event()

    async def stuck(scope, receive, send) -> None:  # type: ignore[no-untyped-def]
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    async def scenario() -> list[dict[str, object]]:
        sent, task = _call(Guard(stuck, Limits(deadline_s=0.05)))
        await task
        await asyncio.sleep(0)
        return sent

    sent = asyncio.run(scenario())
    assert sent[0]["status"] == 503
    assert json.loads(sent[1]["body"])["error"]["code"] == "timeout"  # type: ignore[arg-type]


def test_work_stops_when_the_client_leaves() -> None:
    cancelled: list[bool] = []

    async def stuck(scope, receive, send) -> None:  # type: ignore[no-untyped-def]
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise

    async def scenario() -> list[dict[str, object]]:
        messages = [{"type": "http.request", "body": b"", "more_body": False},
                    {"type": "http.disconnect"}]

        async def receive() -> dict[str, object]:
            await asyncio.sleep(0.01)
            return messages.pop(0)

        sent: list[dict[str, object]] = []

        async def send(message: dict[str, object]) -> None:
            sent.append(message)

        scope = {"type": "http", "method": "GET", "path": "/x", "raw_path": b"/x",
                 "query_string": b"", "headers": []}
        await Guard(stuck)(scope, receive, send)  # type: ignore[arg-type]
        await asyncio.sleep(0)
        return sent

    sent = asyncio.run(scenario())
    assert sent == [] and cancelled == [True]


@pytest.mark.parametrize("url", ["/api/v1/models?serch=x", "/api/v1/cards?min_memory[a]=1",
                                 "/api/v1/models/starcoder-2-15b?contxt=8192",
                                 "/api/v1/cards/geforce-rtx-4090?context=1&context=2",
                                 "/api/v1/estimate?model=x&card=y&qaunt=Q8_0"])
def test_the_api_refuses_undocumented_or_repeated_parameters(client, url: str) -> None:
    r = client.get(url)
    assert r.status_code == 400
    assert r.json()["error"]["code"] in ("unknown_parameter", "repeated_parameter")
