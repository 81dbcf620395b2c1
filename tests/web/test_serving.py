"""How `tpscalc serve` runs: TCP_NODELAY on each connection, its address and an access log."""
from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time

import httpx

from tpscalc.web.serving import NoDelayHTTPProtocol, set_nodelay


def _nodelay(sock: socket.socket) -> int:
    return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)


def test_a_shared_socket_accepts_connections_without_nodelay() -> None:
    """Why the protocol sets it: a listening socket rebuilt from its descriptor, as uvicorn's
    workers rebuild the shared one, has protocol 0, and asyncio then leaves Nagle on."""
    async def accepted_nodelay() -> tuple[int, int]:
        with socket.create_server(("127.0.0.1", 0)) as bound:
            shared = socket.fromfd(bound.fileno(), socket.AF_INET, socket.SOCK_STREAM)
            seen: list[int] = []
            fixed: list[int] = []

            class Probe(asyncio.Protocol):
                def connection_made(self, transport: asyncio.BaseTransport) -> None:
                    sock = transport.get_extra_info("socket")
                    seen.append(_nodelay(sock))
                    set_nodelay(transport)
                    fixed.append(_nodelay(sock))

            server = await asyncio.get_running_loop().create_server(Probe, sock=shared)
            port = shared.getsockname()[1]
            _reader, writer = await asyncio.open_connection("127.0.0.1", port)
            while not fixed:
                await asyncio.sleep(0.01)
            writer.close()
            server.close()
            return seen[0], fixed[0]

    before, after = asyncio.run(accepted_nodelay())
    assert before == 0 and after != 0


def test_the_protocol_is_uvicorns_with_nodelay() -> None:
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    assert issubclass(NoDelayHTTPProtocol, AutoHTTPProtocol)
    assert "connection_made" in vars(NoDelayHTTPProtocol)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_serve_prints_its_address_and_logs_each_request() -> None:
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "tpscalc", "serve", "--port", str(port),
                             "--workers", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        end = time.monotonic() + 60
        while time.monotonic() < end:
            try:
                with httpx.Client() as client:  # one keep-alive connection, two requests
                    if client.get(f"http://127.0.0.1:{port}/healthz").status_code == 200:
                        client.get(f"http://127.0.0.1:{port}/healthz?again")
                        break
            except httpx.HTTPError:
                time.sleep(0.2)
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=30)
    assert f"http://127.0.0.1:{port}/" in err and "2 workers" in err
    assert '"GET /healthz HTTP/1.1" 200' in out and "Traceback" not in err
