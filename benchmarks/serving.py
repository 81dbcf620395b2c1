"""Start `tpscalc serve` on a free 127.0.0.1 port for a benchmark, and wait until it answers."""
from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager


def free_port() -> int:
    """A TCP port nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(base: str, timeout_s: float = 60) -> None:
    """Return once `base`/healthz answers 200, else RuntimeError after `timeout_s`."""
    import httpx

    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        try:
            if httpx.get(base + "/healthz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise RuntimeError("server did not start")


@contextmanager
def running_server(*options: str) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """`tpscalc serve` with `options` on a free port, ready: (the process, its base URL);
    stopped when the block ends, however it ends."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([sys.executable, "-m", "tpscalc", "serve", "--port", str(port),
                               *options], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(base)
        yield server, base
    finally:
        server.terminate()
        server.wait(timeout=30)
