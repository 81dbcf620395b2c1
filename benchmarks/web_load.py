"""Site throughput under load: wrk with 200 connections against `tpscalc serve`.

    python benchmarks/web_load.py [--duration 30] [--connections 200] [--workers N]

Starts `tpscalc serve` (one worker per core unless --workers) on a free 127.0.0.1 port, warms
each page once, then runs wrk (Debian's `wrk` package) on the default model page, the cards
index and the model report API, with `Accept-Encoding: gzip` as browsers send it. Prints
requests per second, p50 and p99 latency, and errors (socket errors, non-2xx, timeouts).
Targets: ≥ 300 req/s on the model page, ≥ 150 on the cards index, p99 ≤ 500 ms, 0 errors.
Traffic goes to 127.0.0.1 only; wrk stops by itself after --duration seconds.
"""
from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys

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


def main() -> None:
    import httpx

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=30)
    parser.add_argument("--connections", type=int, default=200)
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is missing: apt-get install wrk")
    options = ["--max-in-flight", "256"]
    if args.workers:
        options += ["--workers", str(args.workers)]
    with running_server(*options) as (_server, base):
        print(f"wrk, {args.connections} connections, {args.duration} s each, "
              f"workers: {args.workers or 'one per core'}")
        for label, path in TARGETS:
            for _ in range(12):  # warm every worker's caches (requests spread over workers)
                httpx.get(base + path, headers={"Accept-Encoding": "gzip"}, timeout=60)
            out = subprocess.run(
                ["wrk", "-t2", f"-c{args.connections}", f"-d{args.duration}s", "--latency",
                 "--timeout", "10s", "-H", "Accept-Encoding: gzip", base + path],
                capture_output=True, text=True, check=True).stdout
            r = parse(out)
            print(f"{label:18s} {r['rps']:8.0f} req/s   p50 {r['p50_ms']:7.1f} ms   "
                  f"p99 {r['p99_ms']:7.1f} ms   errors {r['errors']:.0f}")


if __name__ == "__main__":
    main()
