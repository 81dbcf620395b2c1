"""A cold page under load: wrk with 200 connections against a fresh `tpscalc serve`.

    python benchmarks/web_stampede.py [--duration 10] [--connections 200] [--workers 1]

For each page below, starts a new server (nothing cached), then at once runs wrk on that page:
every connection asks for the same uncached page in the same instant. Without single-flight
misses each request built the page itself, and the queue overflowed into 503s (issue 29: 136 x
503, p99 4.1 s). Prints requests per second, p50 and p99 latency, 503s and other errors.
Target: no 503, p99 under 1 s. Traffic goes to 127.0.0.1 only.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys

from serving import running_server
from web_load import parse

PAGES = (("cold model page", "/en/models/starcoder-2-15b?context=8192"),
         ("cold model API", "/api/v1/models/qwen3-8b?context=16384"),
         ("cold card page", "/en/cards/geforce-rtx-4090?context=8192"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--connections", type=int, default=200)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is missing: apt-get install wrk")
    print(f"wrk, {args.connections} connections, {args.duration} s, {args.workers} worker(s), "
          "a fresh server per page")
    for label, path in PAGES:
        with running_server("--workers", str(args.workers)) as (_server, base):
            out = subprocess.run(
                ["wrk", "-t2", f"-c{args.connections}", f"-d{args.duration}s", "--latency",
                 "--timeout", "10s", "-H", "Accept-Encoding: gzip", base + path],
                capture_output=True, text=True, check=True).stdout
        r = parse(out)
        print(f"{label:16s} {r['rps']:7.0f} req/s   p50 {r['p50_ms']:7.1f} ms   "
              f"p99 {r['p99_ms']:7.1f} ms   non-2xx or socket errors {r['errors']:.0f}")


if __name__ == "__main__":
    main()
