"""Site throughput: one keep-alive client, then wrk with 200 connections, on `tpscalc serve`.

    python benchmarks/web_load.py [--duration 30] [--connections 200] [--workers N]

Starts `tpscalc serve` (one worker per core unless --workers) on a free 127.0.0.1 port, warms
each page once, then for the default model page, the cards index and the model report API,
with `Accept-Encoding: gzip` as browsers send it: one client on one keep-alive connection
(wrk -c1, or a Python http.client loop when wrk is missing: issue 27's ~40 ms Nagle wait on
each request after the first shows here), then wrk with --connections (skipped, with a note,
without wrk: Debian's `wrk` package). Prints requests per second, p50 and p99 latency, and
errors (socket errors, non-2xx, timeouts). Targets (issue 27): one client on the model page
300+ req/s; 200 connections 1,000+ req/s, p99 under 300 ms, no errors.
Traffic goes to 127.0.0.1 only; wrk stops by itself after --duration seconds.
"""
from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import time
from urllib.parse import urlsplit

from serving import running_server

TARGETS = (("model page", "/en/models/starcoder-2-15b"), ("cards index", "/en/cards"),
           ("model report API", "/api/v1/models/starcoder-2-15b"))


def _ms(text: str) -> float:
    value, unit = re.match(r"([\d.]+)(us|ms|s)", text).groups()  # type: ignore[union-attr]
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def parse(out: str) -> dict[str, float]:
    """req/s, p50, p99 (ms) and error count from wrk's --latency output."""
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    p50 = _ms(re.search(r"\s50%\s+(\S+)", out).group(1))  # type: ignore[union-attr]
    p99 = _ms(re.search(r"\s99%\s+(\S+)", out).group(1))  # type: ignore[union-attr]
    errors = 0
    found = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    if found:
        errors += sum(int(g) for g in found.groups())
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if non2xx:
        errors += int(non2xx.group(1))
    return {"rps": rps, "p50_ms": p50, "p99_ms": p99, "errors": errors}


def one_client(base: str, path: str, duration_s: float) -> dict[str, float]:
    """req/s, p50, p99 (ms) and errors of one client on one keep-alive connection (Python's
    http.client: the fallback when wrk is missing)."""
    import http.client

    where = urlsplit(base)
    conn = http.client.HTTPConnection(where.hostname or "127.0.0.1", where.port, timeout=10)
    times_ms: list[float] = []
    errors = 0
    end = time.perf_counter() + duration_s
    while time.perf_counter() < end:
        start = time.perf_counter()
        conn.request("GET", path, headers={"Accept-Encoding": "gzip"})
        response = conn.getresponse()
        response.read()
        errors += response.status >= 400
        times_ms.append((time.perf_counter() - start) * 1000)
    conn.close()
    cuts = statistics.quantiles(times_ms, n=100)
    return {"rps": len(times_ms) / sum(times_ms) * 1000, "p50_ms": statistics.median(times_ms),
            "p99_ms": cuts[98], "errors": errors}


def run_wrk(base: str, path: str, connections: int, duration_s: int) -> dict[str, float]:
    """wrk's figures for `connections` keep-alive connections on `path`."""
    threads = min(2, connections)
    out = subprocess.run(
        ["wrk", f"-t{threads}", f"-c{connections}", f"-d{duration_s}s", "--latency",
         "--timeout", "10s", "-H", "Accept-Encoding: gzip", base + path],
        capture_output=True, text=True, check=True).stdout
    return parse(out)


def _line(label: str, r: dict[str, float]) -> str:
    return (f"{label:34s} {r['rps']:8.0f} req/s   p50 {r['p50_ms']:7.1f} ms   "
            f"p99 {r['p99_ms']:7.1f} ms   errors {r['errors']:.0f}")


def main() -> None:
    import httpx

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=30)
    parser.add_argument("--connections", type=int, default=200)
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args()
    have_wrk = shutil.which("wrk") is not None
    if not have_wrk:
        print("wrk is missing (apt-get install wrk): one client measured with http.client, "
              "the 200-connection run skipped")
    options = ["--max-in-flight", "256", "--no-access-log"]
    if args.workers:
        options += ["--workers", str(args.workers)]
    with running_server(*options) as (_server, base):
        print(f"{args.duration} s each, workers: {args.workers or 'one per core'}; "
              f"load average before: {_load()}")
        for label, path in TARGETS:
            for _ in range(12):  # warm every worker's caches (requests spread over workers)
                httpx.get(base + path, headers={"Accept-Encoding": "gzip"}, timeout=60)
            single = (run_wrk(base, path, 1, args.duration) if have_wrk
                      else one_client(base, path, args.duration))
            print(_line(f"{label}, 1 keep-alive client", single))
            if have_wrk:
                many = run_wrk(base, path, args.connections, args.duration)
                print(_line(f"{label}, {args.connections} connections", many))
        print(f"load average after: {_load()}")


def _load() -> str:
    """The 1, 5 and 15 minute load averages (what else the machine was running)."""
    import os

    return " ".join(f"{x:.2f}" for x in os.getloadavg())

if __name__ == "__main__":
    main()
