"""Time of a page, an API report and a report with a rig (gpus=, ram=) against the plain one.

    python benchmarks/rig_report_speed.py [--runs 7] [--reports] [--calls]

Every request is uncached: the site's report and page caches are emptied before each (what
the engine keeps per model across requests, as a serving worker does, stays). Prints the
median and least CPU time of the process per request (time.process_time: other processes on
a shared machine add less than to the wall clock) and the ratio to the plain request of the
same kind (issue 29: a rig page within twice a plain one). `--reports` times the report
builders alone, without the web layer; `--calls` adds the number of Python-level function calls
of one build (cProfile), a figure other processes on a shared machine do not move. Pages are
timed with the cycle collector settled as a serving worker settles it (web.app.settle_collector),
`--default-gc` with CPython's defaults.
Timings are printed, never asserted.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

# (kind, label, path or name, options): issue 29's requests, each after its plain one
PAGES = [
    ("model", "model page", "/en/models/ether0", {}),
    ("model", "model page", "/en/models/ether0", {"gpus": "2", "ram": "64"}),
    ("model", "model page", "/en/models/qwen3-8b", {}),
    ("model", "model page", "/en/models/qwen3-8b", {"gpus": "2", "ram": "64"}),
    ("api", "model API", "/api/v1/models/ether0", {}),
    ("api", "model API", "/api/v1/models/ether0", {"ram": "64"}),
    ("api", "model API", "/api/v1/models/ether0", {"gpus": "2", "ram": "64"}),
    ("card", "card page", "/en/cards/geforce-rtx-4090", {}),
    ("card", "card page", "/en/cards/geforce-rtx-4090", {"ram": "39"}),
    ("card", "card page", "/en/cards/geforce-rtx-4090", {"gpus": "2", "ram": "64"}),
]
REPORTS = [
    ("model", "ether0", {}), ("model", "ether0", {"ram": "64"}),
    ("model", "ether0", {"gpus": "2", "ram": "64"}),
    ("card", "RTX 4090", {}), ("card", "RTX 4090", {"ram": "39"}),
    ("card", "RTX 4090", {"gpus": "2"}),
]


def _time(ask: Callable[[int], None], runs: int) -> tuple[float, float]:
    """Median and least CPU ms of `runs` calls of ask(run)."""
    times = []
    for run in range(runs):
        start = time.process_time()
        ask(run)
        times.append((time.process_time() - start) * 1000)
    return statistics.median(times), min(times)


def _print(label: str, opts: dict[str, str], med: float, least: float,
           plain: dict[str, float], kind: str) -> None:
    shown = "&".join(f"{k}={v}" for k, v in opts.items()) or "(plain)"
    if not opts:
        plain[kind] = med
    ratio = f"{med / plain[kind]:4.1f}x" if kind in plain else ""
    print(f"{label:40s} {shown:18s} median {med:6.0f} ms  least {least:6.0f} ms  {ratio}")


def pages(runs: int, default_gc: bool = False) -> None:
    from fastapi.testclient import TestClient

    from tpscalc.web import reports
    from tpscalc.web.app import create_app

    client = TestClient(create_app())
    plain: dict[str, float] = {}
    for _, _, path, opts in PAGES:
        client.get(path, params=opts)  # each path's own first-use costs
    if not default_gc:  # as a serving worker does once warmed up (web.app.app_from_env)
        from tpscalc.web.app import settle_collector

        settle_collector()
    for kind, label, path, opts in PAGES:
        def ask(run: int, path: str = path, opts: dict[str, str] = opts) -> None:
            reports.clear_cache()
            r = client.get(path, params=opts)
            assert r.status_code == 200, r.text[:300]

        med, least = _time(ask, runs)
        _print(f"{label} {path.rsplit('/', 1)[1]}", opts, med, least, plain, kind)


def _calls(ask: Callable[[int], None]) -> int:
    """Python-level function calls of one ask (cProfile's count: the same under any load)."""
    import cProfile
    import io
    import pstats

    profile = cProfile.Profile()
    profile.enable()
    ask(0)
    profile.disable()
    return int(pstats.Stats(profile, stream=io.StringIO()).total_calls)  # type: ignore[attr-defined]


def report_builders(runs: int, calls: bool = False) -> None:
    from tpscalc.report import card_report, model_report
    from tpscalc.report.request import (
        CARD_RIG_REPORT_PARAMS,
        MODEL_RIG_REPORT_PARAMS,
        parse_request,
    )

    plain: dict[str, float] = {}
    for kind, name, opts in REPORTS:
        def ask(run: int, kind: str = kind, name: str = name, opts: dict[str, str] = opts
                ) -> None:
            if kind == "model":
                model_report.model_report(name, parse_request(opts, MODEL_RIG_REPORT_PARAMS))
            else:
                card_report.card_report(name, parse_request(opts, CARD_RIG_REPORT_PARAMS))

        ask(runs)
        med, least = _time(ask, runs)
        _print(f"{kind} report {name}", opts, med, least, plain, kind)
        if calls:
            print(f"{'':40s} {'':18s} {_calls(ask):,} Python-level calls")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--reports", action="store_true", help="the report builders alone")
    parser.add_argument("--calls", action="store_true",
                        help="with --reports: the function calls of one build (load-independent)")
    parser.add_argument("--default-gc", action="store_true",
                        help="pages with CPython's collector settings, not a worker's")
    args = parser.parse_args()
    if args.reports:
        report_builders(args.runs, args.calls)
    else:
        pages(args.runs, args.default_gc)


if __name__ == "__main__":
    main()
