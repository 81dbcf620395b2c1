"""Wall-clock figures: one model report, every model's report in turn, card reports, CLI start-up.

Run: `python benchmarks/speed.py [MODEL] [--all-models]`. Prints seconds; asserts nothing.
"""
from __future__ import annotations

import statistics
import subprocess
import sys
import time


def _cli_seconds(args: list[str], repeat: int = 3) -> float:
    """Median wall time of a command, s."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(args, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    """Print the timings."""
    model = next((a for a in sys.argv[1:] if not a.startswith("--")), "StarCoder 2 15B")
    py = sys.executable
    bare = _cli_seconds([py, "-c", "pass"])
    cli = _cli_seconds([py, "-m", "tpscalc", "model", model, "--json"])
    print(f"python -c pass:                        {bare:.3f} s")
    print(f"tpscalc model {model!r} --json (CLI): {cli:.3f} s ({cli - bare:+.3f} s over bare)")
    help_s = _cli_seconds([py, "-m", "tpscalc", "--help"])
    print(f"tpscalc --help:                        {help_s:.3f} s")

    from tpscalc.catalog import store
    from tpscalc.report.card_report import build_card_report
    from tpscalc.report.model_report import build_model_report

    start = time.perf_counter()
    cards, models = store.cards(), store.models()
    print(f"catalog load ({len(cards)} cards, {len(models)} models): "
          f"{time.perf_counter() - start:.3f} s")
    start = time.perf_counter()
    build_model_report(model).to_json()
    print(f"one model report + JSON (in process):  {time.perf_counter() - start:.3f} s")
    start = time.perf_counter()
    build_card_report("RTX 4090").to_json()
    print(f"one card report + JSON (835 models):   {time.perf_counter() - start:.3f} s")
    if "--all-models" in sys.argv:
        start = time.perf_counter()
        for m in models:
            build_model_report(m)
        total = time.perf_counter() - start
        print(f"every model's report ({len(models)}):      {total:.1f} s "
              f"({total / len(models) * 1000:.0f} ms each)")


if __name__ == "__main__":
    main()
