"""Cross-check every catalog architecture against every source that describes the same model,
and write a report: which source each field came from, and every disagreement.

Run by tools/build_catalog.py after build_models.py (python tools/crosscheck.py [--check]).
Output: tools/reports/crosscheck.md (committed, deterministic). Exit code 1 when a disagreement
is unresolved (and, with --check, when the committed report is out of date).

Sources that describe "the same model" are those whose repository id equals the model's Hugging
Face repository or the repository of the source the catalog took: verbatim config.json files
(aiconfigurator, tools/data/hf_configs), litgpt, MLC-LLM (by its `_name_or_path`), llmfit's list.
Epoch AI gives only the parameter count, which the join's guard checks (tools/matching.py).

Rules, in order:
1. A field a source cannot express (llmfit: kv_lora_rank, sliding windows, shared experts,
   first dense layers, linear-attention layers for the families in
   archsources.LLMFIT_UNEXPRESSED) is never a disagreement and never a guess: when the catalog
   took such a source without the fact, the model is flagged approximated (`unexpressed`).
2. A value set by the hand map (overrides citing a config.json; for a recent model, a "hand" row
   of tools/data/recent_architectures.csv) is the hand map's: it resolves
   any disagreement with a source of lower trust, and with a higher one only when its note cites
   the config it was read from (a URL).
3. Otherwise the more trusted source wins: verbatim config.json > litgpt, MLC > llmfit list >
   hand map > Epoch. The catalog taking a less trusted value than a source that has the field
   is unresolved, as is a disagreement between two sources of the same rank that the hand map
   does not settle.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import archsources
import recent_models
from matching import MapRow, load_map

from tpscalc.catalog.schema import Architecture

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SHARED = ROOT  # data/sources: the repository's copy of ../shared/data/sources
MODELS_FILE = ROOT / "src" / "tpscalc" / "catalog" / "data" / "models.json"
MAP_FILE = ROOT / "tools" / "data" / "model_architecture_map.csv"
HF_CONFIGS = ROOT / "tools" / "data" / "hf_configs"
REPORT = ROOT / "tools" / "reports" / "crosscheck.md"
# Rank of trust (lower is more trusted); litgpt and MLC share a rank.
RANK = {"aiconfigurator": 0, "hfconfig": 0, "litgpt": 1, "mlc": 1, "llmfit": 2, "hand": 3,
        "base": 3}
# Fields compared, and for each the sources that can express it (None: all).
FIELDS = ("num_layers", "hidden_size", "num_attention_heads", "num_kv_heads", "head_dim",
          "vocab_size", "intermediate_size", "num_experts", "num_experts_active",
          "moe_intermediate_size", "num_shared_experts", "first_dense_layers", "kv_lora_rank",
          "qk_rope_head_dim", "sliding_window", "sliding_window_layers",
          "linear_attention_layers", "tied_embeddings", "max_context")
# Fields llmfit's entries never carry (the tied flag is fitted to its count, not read).
LLMFIT_NEVER = frozenset({"kv_lora_rank", "qk_rope_head_dim", "sliding_window",
                          "sliding_window_layers", "linear_attention_layers",
                          "first_dense_layers", "tied_embeddings"})


@dataclass(frozen=True)
class Disagreement:
    """One field on which a source differs from the catalog's value."""

    model: str
    field: str
    catalog: Any
    catalog_from: str
    other: Any
    other_from: str
    resolution: str  # empty when unresolved


def _kind(label: str) -> str:
    return label.split(":", 1)[0]


# litgpt's configs have no tie flag (archsources.arch_from_litgpt ties Gemma by name only).
LITGPT_NEVER = frozenset({"tied_embeddings"})


def expresses(source: str, field: str) -> bool:
    """True when `source` can state `field` (llmfit cannot state the layer-pattern facts)."""
    return not ((source == "llmfit" and field in LLMFIT_NEVER)
                or (source == "litgpt" and field in LITGPT_NEVER))


def _window(arch: Architecture, f: str) -> Any:
    """The field's value; a sliding window no shorter than the context is no window at all
    (Phi-4-mini's 262,144 on a 131,072-token model)."""
    value = getattr(arch, f)
    if f in ("sliding_window", "sliding_window_layers") and arch.sliding_window and \
            arch.max_context and arch.sliding_window >= arch.max_context:
        return None if f == "sliding_window" else 0
    return value


Lookup = Callable[[str], list[archsources.Candidate]]


def load_candidates(shared: Path) -> Lookup:
    """A lookup of every converted candidate of every source by lower-case repository id
    (llmfit's entries are converted on first lookup: converting all 12,000 takes a minute)."""
    s = shared / "data" / "sources"
    by_repo: dict[str, list[archsources.Candidate]] = {}
    fixed = (archsources.load_aiconfigurator(s / "aiconfigurator_model_configs")
             + archsources.load_aiconfigurator(HF_CONFIGS, "hfconfig")
             + archsources.load_litgpt(s / "litgpt_configs.json"))
    mlc = json.loads((s / "mlc_llm_model_presets.json").read_text())
    for c in archsources.load_mlc(s / "mlc_llm_model_presets.json"):
        repo = str(mlc[c.key].get("_name_or_path") or "")
        fixed.append(archsources.Candidate(c.source, c.key, repo if "/" in repo else None, c.arch))
    for c in fixed:
        if c.repo and c.arch is not None:
            by_repo.setdefault(c.repo.lower(), []).append(c)
    llmfit = {e["name"].lower(): e for e in
              archsources.load_llmfit(s / "llmfit_hf_models_v1.1.17.json")}

    def lookup(repo: str) -> list[archsources.Candidate]:
        found = list(by_repo.get(repo, []))
        if repo in llmfit:
            c = archsources.llmfit_candidate(llmfit[repo])
            if c.arch is not None:
                found.append(c)
        return found

    return lookup


def _repos(model: dict[str, Any], arch: Architecture) -> list[str]:
    repos = [str(model.get("hf_repo") or "")]
    label = arch.source
    if _kind(label) in ("aiconfigurator", "hfconfig"):
        repos.append(label.split(":", 1)[1].replace("--", "/", 1))
    elif _kind(label) == "llmfit":
        repos.append(label.split(":", 1)[1])
    return [r.lower() for i, r in enumerate(repos) if "/" in r and r.lower() not in
            [x.lower() for x in repos[:i]]]


def field_sources(arch: Architecture, row: MapRow | None) -> dict[str, str]:
    """Which source each compared field of the catalog's architecture came from."""
    base = arch.source or "?"
    out = {}
    for f in FIELDS:
        if row is not None and f in row.overrides:
            out[f] = f"hand map ({base})"
        elif any(f in archsources._EXPRESSED_BY.get(u, (u,)) or f == u for u in arch.unexpressed):
            out[f] = f"not expressed by {base}: approximated"
        else:
            out[f] = base
    return out


def _resolve(f: str, cat_from: str, other: archsources.Candidate, row: MapRow | None) -> str:
    """How a disagreement is settled, or "" when no rule settles it."""
    cat_kind, other_kind = _kind(cat_from), other.source
    cited = row is not None and "http" in row.note
    if row is not None and f in row.overrides:
        return "hand map value (its note cites the config)" if cited else ""
    if RANK.get(cat_kind, RANK["hand"]) < RANK[other_kind]:
        return f"{cat_kind} is more trusted than {other_kind}"
    if cited and row is not None and row.target == cat_from:
        return "hand map chose this source (its note cites why)"
    return ""


def check_model(model: dict[str, Any], arch: Architecture, row: MapRow | None,
                cands: Lookup) -> list[Disagreement]:
    """Every field on which a source for the same repository differs from the catalog."""
    out = []
    seen = set()
    for repo in _repos(model, arch):
        for c in cands(repo):
            if c.label in seen or c.arch is None or c.label == arch.source:
                continue
            seen.add(c.label)
            for f in FIELDS:
                if not (expresses(c.source, f) and expresses(_kind(arch.source), f)) \
                        or f in arch.unexpressed or f in c.arch.unexpressed:
                    continue
                mine, theirs = _window(arch, f), _window(c.arch, f)
                moe = arch.is_moe or c.arch.is_moe
                if f == "intermediate_size" and moe and not arch.first_dense_layers:
                    continue  # MoE: the dense width is unused unless some layers are dense
                if mine == theirs or theirs is None:
                    continue
                how = _resolve(f, arch.source, c, row)
                out.append(Disagreement(model["name"], f, mine, arch.source, theirs, c.label, how))
    return out


def _md_table(rows: Iterable[tuple[str, ...]], head: tuple[str, ...]) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return lines


def _recent_row(arch: Architecture,
                recent_hand: dict[str, recent_models.HandArch]) -> MapRow | None:
    """A recent model's hand-typed architecture (tools/data/recent_architectures.csv, target
    "hand") as a hand-map row: its facts settle a disagreement as the hand map's do."""
    if not arch.source.startswith("hand:"):
        return None
    h = recent_hand.get(arch.source.split(":", 1)[1].lower())
    if h is None or h.target != "hand":
        return None
    return MapRow(target=arch.source, overrides=h.overrides, note=h.note)


def report(shared: Path) -> tuple[str, int]:
    """The markdown report and the number of unresolved disagreements."""
    doc = json.loads(MODELS_FILE.read_text(encoding="utf-8"))
    hand = load_map(MAP_FILE)
    recent_hand = recent_models.load_hand()
    cands = load_candidates(shared)
    per_model: list[tuple[str, ...]] = []
    found: list[Disagreement] = []
    approximated = []
    for m in doc["models"]:
        if not m.get("architecture"):
            continue
        arch = Architecture.model_validate(m["architecture"])
        row = hand.get(m["name"]) or _recent_row(arch, recent_hand)
        srcs = field_sources(arch, row)
        from_hand = sorted(f for f, s in srcs.items() if s.startswith("hand map"))
        per_model.append((m["name"], arch.source, ", ".join(from_hand) or "–",
                          ", ".join(arch.unexpressed) or "–"))
        if arch.unexpressed:
            approximated.append(m["name"])
        found += check_model(m, arch, row, cands)
    unresolved = [d for d in found if not d.resolution]
    lines = ["# Architecture cross-check", "",
             "Written by `tools/crosscheck.py` (run by `make catalog`); do not edit by hand.",
             "Rules: see the module docstring. Sources compared per model: every source whose",
             "repository id is the model's Hugging Face repository or the catalog source's.", "",
             f"- models with an architecture: {len(per_model)}",
             (f"- disagreements found: {len(found)}, "
              f"resolved by a rule: {len(found) - len(unresolved)}, "
              f"**unresolved: {len(unresolved)}**"),
             (f"- flagged approximated (a fact their source cannot express): "
              f"{len(approximated)}"), ""]
    if unresolved:
        lines += ["## Unresolved", ""]
        lines += _md_table(((d.model, d.field, str(d.catalog), d.catalog_from, str(d.other),
                             d.other_from) for d in unresolved),
                           ("model", "field", "catalog", "from", "other", "from"))
        lines.append("")
    lines += ["## Disagreements resolved by a rule", ""]
    lines += _md_table(((d.model, d.field, str(d.catalog), d.catalog_from, str(d.other),
                         d.other_from, d.resolution) for d in found if d.resolution),
                       ("model", "field", "catalog", "from", "other", "from", "rule"))
    lines += ["", "## Where each model's fields come from", "",
              "Every compared field (" + ", ".join(FIELDS) + ") comes from the source named,",
              "except those the hand map sets (its note cites the config) and those the source",
              "cannot express (the model is flagged approximated).", ""]
    lines += _md_table(per_model, ("model", "source", "fields from the hand map", "not expressed"))
    return "\n".join(lines) + "\n", len(unresolved)


def main(argv: list[str] | None = None) -> int:
    """Write the report; exit 1 on unresolved disagreements (or, with --check, a stale report)."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--shared", type=Path, default=DEFAULT_SHARED)
    ap.add_argument("--check", action="store_true", help="compare with the committed report")
    args = ap.parse_args(argv)
    text, n_unresolved = report(args.shared)
    if args.check:
        same = REPORT.exists() and REPORT.read_text(encoding="utf-8") == text
        print("crosscheck report up to date" if same else "crosscheck report out of date")
        return 0 if same and not n_unresolved else 1
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(text, encoding="utf-8")
    print(f"wrote {REPORT.relative_to(ROOT)}: {n_unresolved} unresolved disagreements")
    return 1 if n_unresolved else 0


if __name__ == "__main__":
    raise SystemExit(main())
