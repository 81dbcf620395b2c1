"""The catalog check: what the architecture facts of the committed catalog rest on, and the
rules no model may break. CI runs it (tests/catalog/test_sourcing_check.py; `make check-catalog`).

Counts every model as sourced / derived / approximated (tpscalc.catalog.sourcing) and fails on:
- a mixture of experts whose active parameters equal its total;
- a name with "A<n>B" whose active count is not n billion within ACTIVE_TOLERANCE;
- a KV cache per token outside the physically possible range of its attention kind;
- a model (that writes text) without a context limit from a source;
- a model published from 2026 on that is neither sourced/derived nor flagged with a reason;
- a regression against tools/data/catalog_check_baseline.json: more approximated models, fewer
  sourced ones, more models without a context limit than the baseline allows;
- a model listed as missing (tools/data/missing_models.csv, each with its reason and printed
  with what its repository id resolves to) that has become a catalog model.

Run: python tools/catalog_check.py [--write-baseline]
"""
from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tpscalc.catalog.schema import Architecture, Model
from tpscalc.catalog.sourcing import sourcing

BASELINE_FILE = Path(__file__).resolve().parent / "data" / "catalog_check_baseline.json"
MISSING_FILE = Path(__file__).resolve().parent / "data" / "missing_models.csv"
ACTIVE_TOLERANCE = 0.15  # |active / (n × 10^9) - 1| allowed for a name's "A<n>B"
ACTIVE_IN_NAME = re.compile(r"(?i)(?:^|[-_ ])A(\d+(?:\.\d+)?)B(?=$|[-_ ])")
KV_CONTEXT = 32768  # tokens the KV per token is measured at
F16_BYTES = 2


@dataclass
class Report:
    """What the check found: counts by grade, and the failures (empty when it passes)."""

    counts: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    without_context: list[str] = field(default_factory=list)
    known: list[str] = field(default_factory=list)  # failures the baseline explains
    flagged_2026: int = 0


def moe_failure(m: Model) -> str | None:
    """A mixture of experts charged its whole parameter count per token."""
    if m.is_moe and m.parameters_active >= m.parameters_total:
        return f"{m.name}: mixture of experts with active == total"
    return None


def name_failure(m: Model) -> str | None:
    """A name's "A<n>B" the active count contradicts (the count with or without the token
    embedding table, which labs count either way: Qwen's "A3B" leaves it out)."""
    hit = ACTIVE_IN_NAME.search(m.name)
    if hit is None:
        return None
    stated = float(hit.group(1)) * 1e9
    arch = m.architecture
    embedding = float(arch.vocab_size * arch.hidden_size) if arch else 0.0
    if all(abs(active / stated - 1) > ACTIVE_TOLERANCE
           for active in (m.parameters_active, m.parameters_active - embedding)):
        return (f"{m.name}: name says {hit.group(1)} B active, catalog "
                f"{m.parameters_active / 1e9:.2f} B")
    return None


def kv_bounds(arch: Architecture) -> tuple[float, float]:
    """(lowest, highest) KV-cache bytes per token at KV_CONTEXT (F16) that its attention kind
    allows: MLA caches the latent and the rope key per attention layer; grouped-query attention
    at most every layer's K and V heads, at least those of its full-attention layers."""
    windowed = arch.sliding_window_layers if arch.sliding_window else 0
    full = arch.num_layers - windowed - arch.linear_attention_layers
    attention = arch.num_layers - arch.linear_attention_layers
    if arch.is_mla:
        per_layer = ((arch.kv_lora_rank or 0) + (arch.qk_rope_head_dim or 0)) * F16_BYTES
        return full * per_layer * 0.99, attention * per_layer * 1.01
    per_layer_max = 2 * arch.num_kv_heads * arch.head_dim * F16_BYTES
    low_heads = min(arch.layer_num_kv_heads or (arch.num_kv_heads,))
    per_layer_min = 2 * low_heads * arch.head_dim * F16_BYTES
    if arch.global_head_dim or arch.global_num_kv_heads:  # Gemma 4's full layers
        per_layer_min = (2 * (arch.global_num_kv_heads or low_heads)
                         * (arch.global_head_dim or arch.head_dim) * F16_BYTES)
        per_layer_max = max(per_layer_max, per_layer_min)
    full -= min(full, arch.kv_shared_layers)  # KV-shared layers cache nothing
    return full * per_layer_min * 0.99, attention * per_layer_max * 1.01


def kv_failure(m: Model) -> str | None:
    """A KV cache per token no attention of this kind could hold."""
    from tpscalc.estimate.memory import kv_cache_bytes, recurrent_state_bytes

    arch = m.architecture
    if arch is None or not arch.generates:
        return None
    state = recurrent_state_bytes(arch)
    per_token = (kv_cache_bytes(arch, KV_CONTEXT, "f16") - state) / KV_CONTEXT
    low, high = kv_bounds(arch)
    if not low <= per_token <= high:
        return (f"{m.name}: KV {per_token / 1024:.1f} KiB per token, outside "
                f"{low / 1024:.1f}-{high / 1024:.1f} KiB for its attention")
    return None


def context_limit(m: Model) -> int | None:
    """The context limit a source gives (the architecture's config, else the record's)."""
    arch = m.architecture
    if arch is not None and arch.max_context:
        return arch.max_context
    value = m.record_value("max_context")
    return int(value) if value else None


def check(models: tuple[Model, ...] | list[Model],
          known: dict[str, str] | None = None) -> Report:
    """The counts and failures of the catalog's models; `known`: models whose failure is
    understood (name → the reason), reported as known rather than failed."""
    rep = Report()
    for m in models:
        grade = sourcing(m)
        rep.counts[grade.certainty] += 1
        for rule in (moe_failure, name_failure, kv_failure):
            fail = rule(m)
            if fail and m.name in (known or {}):
                rep.known.append(f"{fail} (known: {(known or {})[m.name]})")
            elif fail:
                rep.failures.append(fail)
        if m.generates and context_limit(m) is None:
            rep.without_context.append(m.name)
        if str(m.publication_date or "") >= "2026" and grade.certainty == "approximated":
            rep.flagged_2026 += 1
            if not grade.reasons:
                rep.failures.append(f"{m.name}: 2026 model approximated without a reason")
    return rep


def load_missing(path: Path = MISSING_FILE) -> list[dict[str, str]]:
    """tools/data/missing_models.csv: the models the catalog does not hold, with why."""
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def missing_lines(rows: list[dict[str, str]], hf_repos: set[str]) -> tuple[list[str], list[str]]:
    """(one line per missing model: its reason and what its repository id resolves to now;
    failures: a listed repository that has become a catalog model's own)."""
    from tpscalc.catalog import hf_index

    lines, failures = [], []
    for r in rows:
        repo = r["repo"]
        if repo and repo.lower() in hf_repos:
            failures.append(f"{r['name']}: listed as missing, but {repo} is a catalog model")
            continue
        found = hf_index.find_repo(repo) if repo else None
        if found is None:
            now = f"{repo or 'no repository'}: not resolved"
        else:
            base = hf_index.catalog_name(found.slug) or "no catalog model"
            now = f"{repo}: resolves ({found.kind}) to {base}"
        lines.append(f"{r['name']} ({now}): {r['reason']}")
    return lines, failures


def regressions(rep: Report, baseline: dict[str, Any]) -> list[str]:
    """What got worse than the committed baseline."""
    out = []
    if rep.counts["approximated"] > baseline["approximated_max"]:
        out.append(f"approximated {rep.counts['approximated']} > baseline "
                   f"{baseline['approximated_max']}")
    if rep.counts["sourced"] < baseline["sourced_min"]:
        out.append(f"sourced {rep.counts['sourced']} < baseline {baseline['sourced_min']}")
    if len(rep.without_context) > baseline["without_context_max"]:
        out.append(f"without a context limit {len(rep.without_context)} > baseline "
                   f"{baseline['without_context_max']}")
    return out


def baseline_of(rep: Report, known: dict[str, str]) -> dict[str, Any]:
    """The baseline this report sets (what --write-baseline stores; known failures kept)."""
    return {"approximated_max": rep.counts["approximated"], "sourced_min": rep.counts["sourced"],
            "without_context_max": len(rep.without_context), "known": known}


def load_baseline(path: Path = BASELINE_FILE) -> dict[str, Any]:
    """The committed baseline."""
    return dict(json.loads(path.read_text(encoding="utf-8")))


def main(argv: list[str] | None = None) -> int:
    """Print the counts; exit 1 on a failure or a regression."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write-baseline", action="store_true",
                    help="store the current counts as the baseline")
    args = ap.parse_args(argv)
    from tpscalc.catalog.store import models

    baseline = load_baseline()
    rep = check(models(), baseline.get("known", {}))
    total = sum(rep.counts.values())
    print(f"models {total}: sourced {rep.counts['sourced']}, derived {rep.counts['derived']}, "
          f"approximated {rep.counts['approximated']}")
    print(f"published from 2026 and approximated (each with its reason): {rep.flagged_2026}")
    print(f"without a context limit from a source: {len(rep.without_context)}")
    for line in rep.known:
        print(f"known {line}")
    missing, missing_failures = missing_lines(
        load_missing(), {(m.hf_repo or "").lower() for m in models() if m.hf_repo})
    print(f"not in the catalog (tools/data/missing_models.csv): {len(missing)}")
    for line in missing:
        print(f"missing {line}")
    if args.write_baseline:
        baseline = baseline_of(rep, baseline.get("known", {}))
        BASELINE_FILE.write_text(json.dumps(baseline, indent=1, ensure_ascii=False) + "\n",
                                 encoding="utf-8")
        print(f"wrote {BASELINE_FILE}")
    bad = rep.failures + regressions(rep, baseline) + missing_failures
    for line in bad:
        print(f"FAIL {line}")
    print("catalog check: " + ("failed" if bad else "passed"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
