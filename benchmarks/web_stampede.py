"""A cold page under load: wrk with 200 connections against a fresh `tpscalc serve`.

    python benchmarks/web_stampede.py [--duration 10] [--connections 200] [--workers 1]

For each page below, starts a new server (it warms up before it listens: `web.app.warm_up`),
then at once runs wrk on the page: every connection asks for the same uncached page in the
same instant. Without single-flight
misses each request built the page itself, and the queue overflowed into 503s (issue 29: 136 x
503, p99 4.1 s). Prints requests per second, p50 and p99 latency, 503s and other errors.
Target: no 503, p99 under 1 s. Traffic goes to 127.0.0.1 only.
"""
from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile

from serving import running_server
from web_load import parse

# wrk counts every answer by status class; 503s apart (wrk's Lua API: setup, response, done).
COUNT_STATUSES = """
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) n503 = 0; n5xx = 0; n4xx = 0 end
function response(status, headers, body)
  if status == 503 then n503 = n503 + 1 elseif status >= 500 then n5xx = n5xx + 1
  elseif status >= 400 then n4xx = n4xx + 1 end
end
function done(summary, latency, requests)
  local a, b, c = 0, 0, 0
  for _, t in ipairs(threads) do a = a + t:get("n503"); b = b + t:get("n5xx");
    c = c + t:get("n4xx") end
  io.write(string.format("statuses: 503 %d, other 5xx %d, 4xx %d\\n", a, b, c))
end
"""
PAGES = (("cold model page", "/en/models/starcoder-2-15b?context=8192"),
         ("cold model API", "/api/v1/models/qwen3-8b?context=16384"),
         ("cold card page", "/en/cards/geforce-rtx-4090?context=8192"),
         ("cold rig page", "/en/models/qwen3-8b?gpus=2&ram=64"),
         ("cold rig card", "/en/cards/geforce-rtx-4090?ram=39"),
         ("cold rig API", "/api/v1/models/ether0?gpus=2&ram=64"))


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
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as script:
        script.write(COUNT_STATUSES)
        script.flush()
        for label, path in PAGES:
            with running_server("--workers", str(args.workers)) as (_server, base):
                out = subprocess.run(
                    ["wrk", "-t2", f"-c{args.connections}", f"-d{args.duration}s", "--latency",
                     "--timeout", "10s", "-s", script.name, "-H", "Accept-Encoding: gzip",
                     base + path], capture_output=True, text=True, check=True).stdout
            r = parse(out)
            found = re.search(r"statuses: 503 (\d+), other 5xx (\d+), 4xx (\d+)", out)
            n503, n5xx, n4xx = found.groups() if found else ("?", "?", "?")
            print(f"{label:16s} {r['rps']:7.0f} req/s   p50 {r['p50_ms']:7.1f} ms   "
                  f"p99 {r['p99_ms']:7.1f} ms   503s {n503}, other 5xx {n5xx}, 4xx {n4xx}, "
                  f"errors {r['errors']:.0f}")


if __name__ == "__main__":
    main()
