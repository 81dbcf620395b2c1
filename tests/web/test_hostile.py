"""Hostile requests, as uvicorn hands them to the app: no redirect leaves the site, no 5xx, no
traceback, the security headers on every answer (issue 29, items 1, 2 and 9)."""
from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

import pytest

from tpscalc.web.guard import SECURITY_HEADERS, same_site_location

SITE = "http://tpscalc.example"


def asgi_get(app: Any, target: bytes, host: bytes = b"tpscalc.example",
             method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    """(status, headers, body) of `target` sent to `app` the way uvicorn's h11 protocol builds
    the scope (uvicorn/protocols/http/h11_impl.py: the path percent-decoded, the query raw)."""
    raw_path, _, query = target.partition(b"?")
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": method, "scheme": "http", "path": unquote(raw_path.decode("ascii")),
             "raw_path": raw_path, "query_string": query, "root_path": "",
             "headers": [(b"host", host)], "client": ("127.0.0.1", 1), "server": ("x", 80)}
    sent: list[dict[str, Any]] = []

    async def scenario() -> None:
        never = asyncio.Event()
        messages = [{"type": "http.request", "body": b"", "more_body": False}]

        async def receive() -> dict[str, Any]:
            if messages:
                return messages.pop(0)
            await never.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        await app(scope, receive, send)

    asyncio.run(scenario())
    start = sent[0]
    headers = {bytes(k).decode("latin-1").lower(): bytes(v).decode("latin-1")
               for k, v in start["headers"]}
    body = b"".join(m.get("body", b"") for m in sent[1:])
    return int(start["status"]), headers, body


@pytest.fixture()
def app() -> Any:
    from tpscalc.web.app import create_app

    return create_app()


def assert_same_site(location: str) -> None:
    """A Location that a browser resolves to this site, in plain ASCII without controls."""
    assert location.isascii() and location.isprintable(), location
    assert location.startswith("/") and location[1:2] not in ("/", "\\"), location
    assert urlsplit(urljoin(SITE + "/en/models", location)).netloc == "tpscalc.example"


HOSTILE = [
    b"//evil.example/", b"//evil.example/en/models/", b"///evil.example/",
    b"/%2F%2Fevil.example/", b"/%2F/evil.example/", b"/%2f%2fevil.example/?a=1",
    b"/%5Cevil.example/", b"/%5C%5Cevil.example/", b"/\\evil.example/", b"/\\/evil.example/",
    b"/%5C/evil.example/", b"//evil.example/?next=//other.example/",
    b"/%20//evil.example/", b"//evil.example%2F/", b"//%65vil.example/",
    b"http://evil.example/en/models/", b"HTTPS://evil.example//evil2.example/",
    b"http://evil.example", b"http://evil.example/?x=1", b"evil.example/", b"*",
    b"/en/models/%C3%A9t%C3%A9/", b"/%E2%80%AE%2F%2Fevil/", b"/%FF%FE/",
    b"/%00/", b"/%0d%0aSet-Cookie:%20x=1/", b"/en/%0a/", b"/%09//evil.example/",
    b"/%7f/", b"/api/v1/models/%00", b"/en/models/x%0d%0a", b"/api/v1/%0d%0a/",
    b"/en/models/?q=%0d%0a%00", b"/en/models/StarCoder%202%2015B/?context=8192",
    b"/static/%2e%2e/%2e%2e/etc/passwd", b"/static/../../pyproject.toml",
    b"/en/models/starcoder-2-15b?context=%00", b"/en/models/starcoder-2-15b?context=nan",
    b"/api/v1/models/starcoder-2-15b?context=-1", b"/" + b"a/" * 600,
]


@pytest.mark.parametrize("target", HOSTILE, ids=[t.decode()[:40] for t in HOSTILE])
@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_hostile_target_stays_on_the_site(app: Any, target: bytes, method: str) -> None:
    status, headers, _ = asgi_get(app, target, method=method)
    assert 200 <= status < 500, (target, status)
    for name in SECURITY_HEADERS:
        assert name in headers, (target, name)
    if "location" in headers:
        assert_same_site(headers["location"])


@pytest.mark.parametrize(("target", "location"), [
    (b"//evil.example/", "/evil.example"),
    (b"/%2F%2Fevil.example/", "/evil.example"),
    (b"/%5Cevil.example/", "/evil.example"),
    (b"/en/models/%C3%A9/", "/en/models/%C3%A9"),
    (b"http://evil.example/en/models/", "/en/models"),
    (b"/en/models/?q=a%20b&x=%E2%82%AC", "/en/models?q=a%20b&x=%E2%82%AC"),
])
def test_trailing_slash_redirect_is_one_same_site_path(app: Any, target: bytes,
                                                       location: str) -> None:
    status, headers, _ = asgi_get(app, target)
    assert status == 308 and headers["location"] == location


@pytest.mark.parametrize("target", [b"/%00/", b"/%0d%0aX:%201/", b"/en/%1b/x"])
def test_a_control_character_in_the_path_is_404(app: Any, target: bytes) -> None:
    status, headers, body = asgi_get(app, target)
    assert status == 404 and b"control character" in body and "location" not in headers


def test_location_helper_never_names_another_host() -> None:
    for path in ("//a", "/\\a", "\\\\a/", "///", "/%2F", "/\u202e//a", "/\r\nx"):
        assert_same_site(same_site_location(path, b"x=\xff\r\n").decode("ascii"))


@pytest.mark.parametrize(("host", "target", "status"), [
    (b"tpscalc.example", b"/api/v1/models", 200), (b"tpscalc.example:8000", b"/healthz", 200),
    (b"evil.example", b"/api/v1/models", 400), (b"evil.example", b"/en/models", 400),
    (b"tpscalc.example", b"http://evil.example/api/v1/models", 400),
    (b"evil.example", b"http://tpscalc.example/healthz", 200),
])
def test_allowed_hosts(host: bytes, target: bytes, status: int) -> None:
    from tpscalc.web.app import create_app

    got, headers, body = asgi_get(create_app(allowed_hosts=["tpscalc.example"]), target, host)
    assert got == status
    assert all(name in headers for name in SECURITY_HEADERS)
    if status == 400 and b"/api/" in target:
        import json

        assert headers["content-type"] == "application/json"
        assert json.loads(body)["error"]["code"] == "bad_host"


# --- the real server: uvicorn with the protocol `tpscalc serve` uses ---------------------------


@pytest.fixture()
def server() -> Iterator[int]:
    """`tpscalc serve`'s app and protocol on a free port of 127.0.0.1, in a thread."""
    import uvicorn

    from tpscalc.web.app import create_app
    from tpscalc.web.server import SecureH11Protocol

    config = uvicorn.Config(create_app(), host="127.0.0.1", port=0, log_level="warning",
                            access_log=False, server_header=False, http=SecureH11Protocol,
                            lifespan="off")
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    for _ in range(500):
        if srv.started:
            break
        time.sleep(0.01)
    port = srv.servers[0].sockets[0].getsockname()[1]
    yield port
    srv.should_exit = True
    thread.join(10)


def raw_exchange(port: int, request: bytes) -> bytes:
    """The server's whole answer to `request` (the connection closed after it)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(request)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


RAW = [
    b"GET /%00/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    b"GET /%0d%0aSet-Cookie:%20a=1/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    b"GET //evil.example/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    b"GET http://evil.example/en/models/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    b"GET /\xc3\xa9t\xc3\xa9/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    b"GET /a\x00b/ HTTP/1.1\r\nHost: x\r\n\r\n",
    b"NOT HTTP AT ALL\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n",
]


def test_the_real_server_answers_every_hostile_request(server: int,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    for request in RAW:
        answer = raw_exchange(server, request)
        head = answer.split(b"\r\n\r\n", 1)[0].decode("latin-1").lower()
        status = int(head.split()[1])
        assert 200 <= status < 500, (request, head)
        for name in SECURITY_HEADERS:
            assert f"\r\n{name}:" in head, (request, name)
        for line in head.split("\r\n"):
            if line.startswith("location:"):
                assert_same_site(line.split(":", 1)[1].strip())
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"


# --- one parameter, one meaning on the site (issue 29, item 8) ---------------------------------


@pytest.mark.parametrize("query", ["context=", "ram_bandwidth=nan", "depth=-1", "n_ubatch=0",
                                   "tensor_split=nan", "depth=512", "tensor_split=3,1",
                                   "n_gpu_layers=10", "sort=speed", "ram_type=DDR9-1",
                                   "cpu=nope", "pcie=9x99", "ram_channels=0", "gpus=",
                                   "min_quality=", "kv_type="])
def test_the_site_refuses_what_it_does_not_honour(client, query: str) -> None:
    r = client.get(f"/en/models/starcoder-2-15b?{query}")
    assert r.status_code == 400, (query, r.status_code)
    assert "text/html" in r.headers["content-type"]


@pytest.mark.parametrize("query", ["max_quality=", "backend=", "ram=", "search=",
                                   "min_memory=", "utm_source=x", "partial=1"])
def test_the_site_takes_its_form_blanks_and_foreign_keys(client, query: str) -> None:
    assert client.get(f"/en/models/starcoder-2-15b?{query}").status_code == 200


def test_the_site_honours_the_rig_fields_the_api_takes(client) -> None:
    import re

    asked = "gpus=2&ram=64&ram_bandwidth=90"
    api = client.get(f"/api/v1/models/starcoder-2-15b?{asked}").json()
    page = client.get(f"/en/models/starcoder-2-15b?{asked}")
    plain = client.get("/en/models/starcoder-2-15b?gpus=2&ram=64")
    assert page.status_code == 200 and page.text != plain.text
    assert re.search(r'<input type="hidden" name="ram_bandwidth" value="90">', page.text)
    assert api["rows"], "the API answers the same request"
