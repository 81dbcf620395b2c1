"""uvicorn's HTTP/1.1 protocol with the site's security headers on the 400s it answers itself.

A request h11 cannot parse never reaches the app (nor the guard around it): uvicorn answers
400 from its protocol class (`uvicorn/protocols/http/h11_impl.py`, `send_400_response`). This
subclass sends the same answer with the guard's headers; `tpscalc serve` runs with it.
"""
from __future__ import annotations

import uuid

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from tpscalc.web.guard import SECURITY_HEADERS


class SecureH11Protocol(H11Protocol):
    """H11Protocol whose own 400 carries the security headers and an X-Request-Id."""

    def send_400_response(self, msg: str) -> None:
        """The 400 for a request h11 refused, with the headers every other answer has."""
        body = f"400: {msg}\n".encode("ascii", errors="replace")
        headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"connection", b"close"),
                   (b"content-length", str(len(body)).encode())]
        headers += [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
        headers.append((b"x-request-id", uuid.uuid4().hex[:16].encode()))
        for event in (h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
                      h11.Data(data=body), h11.EndOfMessage()):
            self.transport.write(self.conn.send(event))
        self.transport.close()
