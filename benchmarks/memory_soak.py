"""Server memory under distinct parameters: RSS growth over N requests that never repeat.

    python benchmarks/memory_soak.py [--requests 5000] [--threads 2]

Starts `tpscalc serve` (one worker) on a free local port, warms it up, then sends requests to
the model and card report APIs, each with a different context length (the parameter that
fragmented the old entry-counted caches), and prints the server's resident memory before and
after. Target: growth ≤ 150 MB. Traffic goes to 127.0.0.1 only, and the run stops by itself.
"""
from __future__ import annotations

import argparse
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from serving import running_server

MODELS = ("starcoder-2-15b", "llama-3-8b", "qwen3-32b", "mistral-7b")
CARDS = ("geforce-rtx-4090", "geforce-rtx-3060-12-gb", "m2-max-38-core", "h100-sxm5-80-gb")


def rss_mb(pid: int) -> float:
    """Resident set size of `pid`, MB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def paths(n: int) -> list[str]:
    out = []
    for i in range(n):
        # every request a context no other request uses, within every model's limit (8,192)
        context = 1024 + i
        if i % 2:
            out.append(f"/api/v1/cards/{CARDS[i % len(CARDS)]}?context={context}")
        else:
            out.append(f"/api/v1/models/{MODELS[i % len(MODELS)]}?context={context}")
    return out


def main() -> None:
    import httpx

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    with running_server("--workers", "1") as (server, base):
        with httpx.Client(base_url=base, timeout=30) as client:
            for p in paths(8):  # load the catalog, the engine and the templates
                client.get(p)
            before = rss_mb(server.pid)
            started = time.perf_counter()
            errors = 0
            peak = before

            def fetch(path: str) -> int:
                return client.get(path).status_code

            with ThreadPoolExecutor(args.threads) as pool:
                for i, status in enumerate(pool.map(fetch, paths(args.requests))):
                    errors += status != 200
                    if i % 250 == 0:
                        peak = max(peak, rss_mb(server.pid))
            after = rss_mb(server.pid)
            peak = max(peak, after)
        took = time.perf_counter() - started
        print(f"{args.requests} requests with distinct parameters in {took:.0f} s, "
              f"{errors} errors")
        print(f"server RSS: {before:.0f} MB after warm-up, {after:.0f} MB at the end, "
              f"peak {peak:.0f} MB; growth {after - before:.0f} MB (target ≤ 150 MB)")


if __name__ == "__main__":
    main()
