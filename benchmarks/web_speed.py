"""Server time of a model page (p50/p95, cold and cached) and the time to export the site.

    python benchmarks/web_speed.py [--model SLUG] [--runs N] [--export-limit N]

Uses the real catalog; when its files are missing (catalog not built yet) it says so and uses a
synthetic one: the test cards repeated to 850 entries and the test models repeated to 835.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path


def _ensure_catalog() -> str:
    from tpscalc.catalog import store
    from tpscalc.catalog.store import CatalogError

    try:
        store.cards(), store.models()
        return "real catalog"
    except CatalogError:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "web"))
        import conftest

        cards = tuple(c.model_copy(update={"name": f"{c.name} #{i}", "slug": f"{c.slug}-{i}"})
                      for i in range(170) for c in conftest.CARDS)
        models = tuple(m.model_copy(update={"name": f"{m.name} #{i}", "slug": f"{m.slug}-{i}"})
                       for i in range(279) for m in conftest.MODELS)[:835]
        store.cards = lambda: cards  # type: ignore[assignment]
        store.models = lambda: models  # type: ignore[assignment]
        return "SYNTHETIC catalog (real one not built)"


def _percentiles(times_ms: list[float]) -> str:
    qs = statistics.quantiles(times_ms, n=20)
    return f"p50 {statistics.median(times_ms):.1f} ms, p95 {qs[18]:.1f} ms (n={len(times_ms)})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default=None)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument(
        "--export-limit", type=int, default=20, help="models and cards to export (0 = all)"
    )
    args = parser.parse_args()
    which = _ensure_catalog()
    from fastapi.testclient import TestClient

    from tpscalc.catalog import store
    from tpscalc.web import reports
    from tpscalc.web.app import create_app
    from tpscalc.web.export import export_site

    client = TestClient(create_app())
    slug = args.model or store.models()[0].slug
    print(f"{which}: {len(store.cards())} cards, {len(store.models())} models; "
          f"page /en/models/{slug}")
    for label, clear in (("cold (report built)", True), ("cached report", False)):
        times = []
        for i in range(args.runs):
            if clear:
                reports.clear_cache()
            start = time.perf_counter()
            r = client.get(f"/en/models/{slug}", params={"context": 4096 + (i if clear else 0)})
            times.append((time.perf_counter() - start) * 1000)
            assert r.status_code == 200, r.text[:300]
        print(f"model page, {label}: {_percentiles(times)}")
    limit = args.export_limit or None
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        result = export_site(Path(tmp), limit=limit)
        seconds = time.perf_counter() - start
    print(f"export: {result.pages} pages in {seconds:.1f} s "
          f"({seconds / result.pages * 1000:.0f} ms/page)")
    if limit:
        full = 1 + 3 * (3 + len(store.models()) + len(store.cards()))
        print(f"full site: {full} pages, "
              f"about {full * seconds / result.pages / 60:.1f} min at that rate")


if __name__ == "__main__":
    main()
