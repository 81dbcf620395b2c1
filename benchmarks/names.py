"""How many of the names people use resolve, and get an estimate.

1. Every text-generation repository id of llmfit's list (data/sources/llmfit_hf_models_v1.1.17
   .json, pipeline_tag "text-generation"): the share that resolves (sources.load.resolve_name,
   as the CLI, API and site resolve a model name)
   and the share that gets an estimate on an RTX 4090 at the default request. An estimate
   depends only on the model a name resolves to, so each distinct resolution is estimated once
   (api.evaluate with the first repository that resolves to it).
2. The public llama.cpp run rows of data/measured/localmaxxing_public.csv: how many rows name a
   model that resolves, by the model name as written and by its Hugging Face repository.
Run: python benchmarks/names.py [--card NAME]
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from tpscalc import api
from tpscalc.catalog import NameNotFoundError, get_model

ROOT = Path(__file__).resolve().parents[1]
LLMFIT = ROOT / "data/sources/llmfit_hf_models_v1.1.17.json"
RUNS = ROOT / "data/measured/localmaxxing_public.csv"


KINDS: Counter[str] = Counter()  # how the names resolved (resolved_as' kind, "catalog")


def resolves(name: str) -> Any:
    """The model `name` resolves to, or None (counting how, where resolve_model exists)."""
    try:
        from tpscalc.sources.load import resolve_name
    except ImportError:  # an older checkout, for the figure before
        resolve_name = None
    try:
        if resolve_name is None:
            return get_model(name)
        found = resolve_name(name)
    except NameNotFoundError:
        return None
    KINDS[(found.resolved_as or {}).get("kind", "catalog name")] += 1
    return found.model


def coverage(card: str) -> tuple[int, int, int, float]:
    """(repositories, resolved, estimated, seconds per resolution) over llmfit's list."""
    rows = json.loads(LLMFIT.read_text(encoding="utf-8"))
    repos = sorted({r["name"] for r in rows if r.get("pipeline_tag") == "text-generation"})
    start = time.perf_counter()
    found = {repo: resolves(repo) for repo in repos}
    per_name = (time.perf_counter() - start) / len(repos)
    estimated: dict[tuple[Any, ...], bool] = {}
    ok = 0
    for repo, model in found.items():
        if model is None:
            continue
        arch = model.architecture
        key = (model.slug, model.parameters, arch.max_context if arch else None)
        if key not in estimated:
            try:
                api.evaluate(repo, card)
                estimated[key] = True
            except api.INPUT_ERRORS as exc:
                print(f"  no estimate for {repo}: {exc}", file=sys.stderr)
                estimated[key] = False
        ok += estimated[key]
    return len(repos), sum(m is not None for m in found.values()), ok, per_name


def run_rows() -> tuple[int, int, int, int]:
    """(llama.cpp rows, resolved by name, by repository, by either)."""
    with RUNS.open(newline="", encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if r["engine"] == "llama.cpp"]
    by_name = [resolves(r["model"]) is not None for r in rows]
    by_repo = [bool(r["model_hf"]) and resolves(r["model_hf"]) is not None for r in rows]
    either = sum(a or b for a, b in zip(by_name, by_repo))
    return len(rows), sum(by_name), sum(by_repo), either


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--card", default="RTX 4090")
    args = parser.parse_args()
    total, resolved, estimated, per_name = coverage(args.card)
    print(f"llmfit text-generation repositories: {total}; resolve: {resolved} "
          f"({100 * resolved / total:.1f} %); get an estimate on {args.card}: {estimated} "
          f"({100 * estimated / total:.1f} %); {1000 * per_name:.2f} ms per name")
    if KINDS:
        known = resolved - KINDS["unknown-family"]
        print("  by kind: " + ", ".join(f"{k} {n}" for k, n in KINDS.most_common())
              + f"; without unknown-family: {known} ({100 * known / total:.1f} %)")
    KINDS.clear()
    rows, by_name, by_repo, either = run_rows()
    print(f"localmaxxing llama.cpp run rows: {rows}; model resolves by name: {by_name}, "
          f"by HF repository: {by_repo}, by either: {either} ({100 * either / rows:.1f} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
