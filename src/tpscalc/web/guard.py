"""The ASGI layer around the site: limits, security headers, request ids and access logs.

It sits outside FastAPI, so everything it does holds for every response, the 500s included:
- a URL longer than `max_url_bytes` gets 414, headers beyond `max_header_bytes` get 431;
- at most `max_in_flight` requests run at once; a request that waits more than `queue_wait_s`
  for a slot gets 503 with `Retry-After`;
- a request still running after `deadline_s` gets 503 (when nothing was sent yet);
- a client that disconnects while its request waits or runs stops it: the task is cancelled
  (a report already computing in a worker thread finishes, its answer is dropped);
- HEAD is answered as GET without a body, a trailing slash is redirected to a same-site path
  (percent-encoded, one leading slash: the Host header or the request target never builds
  another site's Location), and every response carries the security headers, no `server`
  header, and an `X-Request-Id`, which the JSON access log line repeats;
- a path with a control character gets 404, an absolute-form target (`GET http://h/p`) is read
  as its path, and a Host outside `allowed_hosts` gets 400 (JSON under /api/).
"""
from __future__ import annotations

import asyncio
import json
import logging
import re
import time
import uuid
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

ACCESS_LOG = logging.getLogger("tpscalc.access")
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# An absolute-form request target (RFC 9112 section 3.2.2): scheme, authority, then the path.
_ABSOLUTE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://(?P<host>[^/?#]*)(?P<path>/[^?#]*)?$")
_LEADING_SLASHES = re.compile(r"^[/\\]+")  # browsers read "/\host" as "//host"
# What a Location path keeps unencoded (RFC 3986 pchar without "%": every byte is re-encoded).
_PATH_SAFE = "/:@!$&'()*+,;=-._~"
_QUERY_SAFE = _PATH_SAFE + "?%"

# No inline script or style anywhere: the CSP can forbid both (OWASP secure headers project,
# https://owasp.org/www-project-secure-headers/).
SECURITY_HEADERS = {
    "content-security-policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; "
        "frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "x-frame-options": "DENY",
    "permissions-policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
    "cross-origin-opener-policy": "same-origin",
}


@dataclass(frozen=True)
class Limits:
    """How much one server process takes on; `tpscalc serve` options set them."""

    max_url_bytes: int = 2048
    max_header_bytes: int = 8192
    max_in_flight: int = 32
    queue_wait_s: float = 2.0
    deadline_s: float = 10.0


class Guard:
    """Wraps an ASGI app with the limits and headers above."""

    def __init__(self, app: ASGIApp, limits: Limits | None = None,
                 allowed_hosts: Sequence[str] | None = None) -> None:
        self.app = app
        self.limits = limits or Limits()
        self.allowed_hosts = tuple(h.lower() for h in allowed_hosts or ())
        self._slots: asyncio.Semaphore | None = None

    def __getattr__(self, name: str) -> object:
        # The wrapped FastAPI app's attributes (routes, openapi, state) stay reachable.
        return getattr(self.app, name)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        request_id = _request_id(scope)
        status: list[int] = [0]
        sent_start: list[bool] = [False]

        async def send_guarded(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = int(message["status"])
                sent_start[0] = True
                message = dict(message)
                message["headers"] = _with_headers(message.get("headers") or (), request_id)
            elif message["type"] == "http.response.body" and scope.get("method") == "HEAD":
                message = {**message, "body": b""}
            await send(message)

        try:
            await self._handle(scope, receive, send_guarded, sent_start)
        finally:
            _log_access(scope, status[0], started, request_id)

    async def _handle(self, scope: Scope, receive: Receive, send: Send,
                      sent_start: list[bool]) -> None:
        refused = self._refusal(scope) or _absolute_form(scope) or self._bad_host(scope)
        if refused is not None:
            await _plain(send, scope, *refused)
            return
        path = str(scope.get("path") or "/")
        if path != "/" and path.endswith("/"):
            await _redirect(send, scope, path)
            return
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.limits.max_in_flight)
        try:
            await asyncio.wait_for(self._slots.acquire(), self.limits.queue_wait_s)
        except TimeoutError:
            await _plain(send, scope, 503, "busy", "the server is busy; try again in a moment",
                         retry_after_s=1)
            return
        try:
            await self._run(scope, receive, send, sent_start)
        finally:
            self._slots.release()

    async def _run(self, scope: Scope, receive: Receive, send: Send,
                   sent_start: list[bool]) -> None:
        inner = scope if scope.get("method") != "HEAD" else {**scope, "method": "GET"}
        gone = asyncio.Event()
        first: list[Message] = []

        async def watch() -> None:
            # A GET has no body: read its one request message, then wait for a disconnect.
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    gone.set()
                    return
                first.append(message)

        async def receive_for_app() -> Message:
            if first:
                return first.pop(0)
            await gone.wait()
            return {"type": "http.disconnect"}

        app_task = asyncio.ensure_future(self.app(inner, receive_for_app, send))
        watcher = asyncio.ensure_future(watch())
        gone_task = asyncio.ensure_future(gone.wait())
        try:
            done, _ = await asyncio.wait({app_task, gone_task}, timeout=self.limits.deadline_s,
                                         return_when=asyncio.FIRST_COMPLETED)
            if app_task in done:
                app_task.result()
                return
            app_task.cancel()
            app_task.add_done_callback(_quietly)
            if not done and not sent_start[0]:  # the deadline passed, the client is still there
                await _plain(send, scope, 503, "timeout", "the request took too long",
                             retry_after_s=1)
        finally:
            for task in (watcher, gone_task):
                task.cancel()

    def _refusal(self, scope: Scope) -> tuple[int, str, str] | None:
        """(status, code, message) when the request is over a size limit, else None."""
        url_bytes = len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"")
        if url_bytes > self.limits.max_url_bytes:
            return (414, "uri_too_long",
                    f"the address is longer than {self.limits.max_url_bytes} bytes")
        header_bytes = sum(len(k) + len(v) for k, v in scope.get("headers") or ())
        if header_bytes > self.limits.max_header_bytes:
            return (431, "headers_too_large",
                    f"the request headers exceed {self.limits.max_header_bytes} bytes")
        if _CONTROL.search(str(scope.get("path") or "")):
            # 404, not 400: no page has one in its name (and OpenAPI slugs are any string)
            return (404, "not_found", "no page has a control character in its address")
        return None

    def _bad_host(self, scope: Scope) -> tuple[int, str, str] | None:
        """(400, ...) when `allowed_hosts` is set and the request names another host."""
        if not self.allowed_hosts or "*" in self.allowed_hosts:
            return None
        host = _host(scope).lower()
        for allowed in self.allowed_hosts:
            if host == allowed or (allowed.startswith("*.") and host.endswith(allowed[1:])):
                return None
        return (400, "bad_host", "this server does not answer for that host")


def _host(scope: Scope) -> str:
    """The Host header's name without its port ("" when absent)."""
    for key, value in scope.get("headers") or ():
        if key == b"host":
            text = bytes(value).decode("latin-1")
            return text.rsplit(":", 1)[0] if not text.endswith("]") else text
    return ""


def _absolute_form(scope: Scope) -> tuple[int, str, str] | None:
    """Rewrite an absolute-form target's scope to its path and host; 400 for any other target
    that does not start with "/"."""
    path = str(scope.get("path") or "/")
    if path.startswith("/"):
        return None
    m = _ABSOLUTE.match(path)
    if m is None:
        return (400, "bad_path", "the request target is not a path")
    # The target's host replaces the Host header (RFC 9112 section 3.2.2).
    scope["path"] = m.group("path") or "/"
    scope["raw_path"] = quote(scope["path"], safe=_PATH_SAFE).encode("ascii")
    headers = [(k, v) for k, v in scope.get("headers") or () if k != b"host"]
    scope["headers"] = [*headers, (b"host", m.group("host").encode("latin-1"))]
    return None


def _quietly(task: asyncio.Future[None]) -> None:
    """Collect a cancelled request's outcome so asyncio does not report it as never retrieved."""
    if not task.cancelled():
        task.exception()


def _request_id(scope: Scope) -> str:
    for key, value in scope.get("headers") or ():
        if key == b"x-request-id":
            text = bytes(value).decode("latin-1")
            if _REQUEST_ID.match(text):
                return text
    return uuid.uuid4().hex[:16]


def _with_headers(headers: Any, request_id: str) -> list[tuple[bytes, bytes]]:
    out = [(k, v) for k, v in headers if k.lower() not in (b"server", b"x-request-id")
           and k.lower().decode("latin-1") not in SECURITY_HEADERS]
    out += [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
    out.append((b"x-request-id", request_id.encode()))
    return out


async def _plain(send: Send, scope: Scope, status: int, code: str, message: str,
                 retry_after_s: int | None = None) -> None:
    """An answer made here, in the API's JSON shape under /api/, else as plain text."""
    if str(scope.get("path") or "").startswith("/api/"):
        body = json.dumps({"error": {"code": code, "message": message}}).encode()
        kind = b"application/json"
    else:
        body = f"{status}: {message}\n".encode()
        kind = b"text/plain; charset=utf-8"
    headers = [(b"content-type", kind), (b"content-length", str(len(body)).encode())]
    if retry_after_s is not None:
        headers.append((b"retry-after", str(retry_after_s).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def same_site_location(path: str, query: bytes = b"") -> bytes:
    """`path` without its trailing slashes as a Location that stays on this site: one leading
    slash (never "//host" nor "/\\host"), every other byte percent-encoded, the query kept."""
    path = "/" + _LEADING_SLASHES.sub("", path.rstrip("/"))
    location = quote(path, safe=_PATH_SAFE)
    if query:
        location += "?" + quote(bytes(query), safe=_QUERY_SAFE)
    return location.encode("ascii")


async def _redirect(send: Send, scope: Scope, path: str) -> None:
    """A permanent redirect to `path` without its trailing slash, on this site, query kept."""
    location = same_site_location(path, scope.get("query_string") or b"")
    headers = [(b"location", location), (b"content-length", b"0")]
    await send({"type": "http.response.start", "status": 308, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


def _log_access(scope: Scope, status: int, started: float, request_id: str) -> None:
    if not ACCESS_LOG.isEnabledFor(logging.INFO):
        return
    ACCESS_LOG.info(json.dumps({
        "request_id": request_id, "method": scope.get("method"),
        "path": str(scope.get("path") or "")[:200], "status": status or 499,
        "ms": round((time.perf_counter() - started) * 1000, 1),
    }))
