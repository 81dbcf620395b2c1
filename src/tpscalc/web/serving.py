"""How `tpscalc serve` runs uvicorn: TCP_NODELAY on every connection, an access log.

With two or more workers uvicorn binds the socket in the parent and hands it to each worker,
which rebuilds it with protocol number 0; asyncio then skips TCP_NODELAY on the sockets it
accepts (its `_set_nodelay` asks for IPPROTO_TCP), so Nagle's algorithm holds each small
response back until the client's delayed ACK, ~40 ms: every keep-alive request after the first
waits that long (Kludex/uvicorn#3149). The protocol below sets TCP_NODELAY itself, on top of
the h11 protocol that gives uvicorn's own 400s the site's security headers (web/server.py).
"""
from __future__ import annotations

import asyncio
import socket
from typing import Any, cast

from tpscalc.web.server import SecureH11Protocol

# uvicorn's `http` option: this module's protocol, imported by each worker.
PROTOCOL = "tpscalc.web.serving:NoDelayHTTPProtocol"


def set_nodelay(transport: asyncio.BaseTransport) -> bool:
    """Turn Nagle's algorithm off on `transport`'s TCP socket; False if it has none."""
    sock = transport.get_extra_info("socket")
    if sock is None or sock.family not in (socket.AF_INET, socket.AF_INET6):
        return False
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError:  # a socket closed by the peer already: nothing to speed up
        return False
    return True


class NoDelayHTTPProtocol(SecureH11Protocol):
    """uvicorn's h11 protocol with the security headers on its own 400s (web/server.py) and
    TCP_NODELAY set on each connection it is given."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        set_nodelay(transport)
        super().connection_made(cast(asyncio.Transport, transport))


def log_config(access_log: bool) -> dict[str, Any]:
    """uvicorn's logging: one line per request on stdout (when `access_log`), its warnings and
    errors on stderr, none of its start-up chatter (serve prints the address itself)."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "access": {"()": "uvicorn.logging.AccessFormatter", "use_colors": False,
                       "fmt": '%(asctime)s %(client_addr)s "%(request_line)s" %(status_code)s'},
            "plain": {"format": "%(message)s"},
        },
        "handlers": {
            "access": {"class": "logging.StreamHandler", "formatter": "access",
                       "stream": "ext://sys.stdout"},
            "error": {"class": "logging.StreamHandler", "formatter": "plain",
                      "stream": "ext://sys.stderr"},
        },
        "loggers": {
            "uvicorn": {"handlers": ["error"], "level": "WARNING", "propagate": False},
            "uvicorn.error": {"level": "WARNING"},
            "uvicorn.access": {"handlers": ["access"], "propagate": False,
                               "level": "INFO" if access_log else "WARNING"},
        },
    }
