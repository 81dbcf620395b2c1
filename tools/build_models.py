"""Build src/tpscalc/catalog/data/models.json: Epoch AI's open-weight language models joined
with architecture facts (see tools/matching.py for the join rules and the guard), then the
labs' releases after Epoch's last record (tools/recent_models.py; its report goes to
tools/reports/recent_models.md).

Run: python tools/build_models.py [--shared ../shared] [--out PATH] [--quiet]
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import archsources
import epoch
import recent_models
from matching import (
    Index,
    MapRow,
    build_index,
    direct_candidates,
    guard,
    guard_reference,
    hf_repos,
    is_multimodal,
    load_map,
    name_keys,
)

from tpscalc.catalog.schema import Architecture, Model
from tpscalc.catalog.slug import unique_slugs

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SHARED = ROOT  # data/sources: the repository's copy of ../shared/data/sources
MAP_FILE = ROOT / "tools" / "data" / "model_architecture_map.csv"
HF_CONFIGS = ROOT / "tools" / "data" / "hf_configs"  # config.json files cited in SOURCES.csv
OUT_FILE = ROOT / "src" / "tpscalc" / "catalog" / "data" / "models.json"
RECENT_REPORT = ROOT / "tools" / "reports" / "recent_models.md"
MAX_TRIES = 25  # direct candidates tried per model before giving up


@dataclass
class Join:
    """What the join decided for one model."""

    arch: Architecture | None = None
    how: str = ""  # "map", "direct", "base"
    base: str = ""  # the base model inherited from (how "base")
    hf_repo: str | None = None
    rejected: list[str] = field(default_factory=list)


def _sources(shared: Path) -> dict[str, Path]:
    s = shared / "data" / "sources"
    return {"epoch": s / "epoch" / "all_ai_models.csv",
            "aiconfigurator": s / "aiconfigurator_model_configs",
            "litgpt": s / "litgpt_configs.json", "mlc": s / "mlc_llm_model_presets.json",
            "llmfit": s / "llmfit_hf_models_v1.1.17.json"}


def _with_overrides(idx: Index, label: str,
                    overrides: dict[str, Any]) -> archsources.Candidate | None:
    key = label.split(":", 1)[-1]
    if label.startswith("llmfit:") and key in idx.llmfit_raw:  # entries without layer facts too
        return archsources.llmfit_candidate(idx.llmfit_raw[key], overrides)
    c = idx.by_label.get(label)
    if c is None:
        return None
    if c.source == "llmfit":
        return archsources.llmfit_candidate(idx.llmfit_raw[c.key], overrides)
    if overrides and c.arch:
        fields = dict(c.arch.model_dump(exclude={"params_total", "params_active"}), **overrides)
        arch = archsources._validated(fields)
        return archsources._candidate(c.source, c.key, c.repo, arch, c.downloads)
    return c


def _try(c: archsources.Candidate | None, params: float, join: Join, how: str,
         multimodal: bool = False) -> bool:
    """Accept `c` into `join` when it has an architecture that passes the guard."""
    if c is None or c.arch is None:
        return False
    if not guard(c.arch.params_total or 0, params, multimodal):
        join.rejected.append(f"{c.label} ({(c.arch.params_total or 0) / 1e9:.2f} B)")
        return False
    join.arch, join.how = c.arch, how
    if how != "base" and c.repo and "/" in c.repo:
        join.hf_repo = c.repo
    return True


def join_direct(idx: Index, rec: dict[str, Any], row: MapRow | None) -> Join:
    """The architecture from the hand map, else from repository ids and names."""
    join, params, mm = Join(), guard_reference(rec, row), is_multimodal(rec)
    if row is not None:
        if row.target == "none" or row.target.startswith("base:"):
            return join
        target = row.target
        if target == "hand":  # facts typed from the config.json the note cites
            arch = archsources._validated(dict(row.overrides, source=f"hand:{rec['model']}"))
            c = archsources._candidate("hand", rec["model"], None, arch)
            if not _try(c, params, join, "map", mm):
                join.rejected.append(f"hand facts unusable: {arch}")
            return join
        if target.startswith("hf:"):
            hits = idx.by_repo.get(target[3:].lower(), [])
            target = (min(hits, key=lambda c: archsources.TRUST.index(c.source)).label
                      if hits else target)
        c = _with_overrides(idx, target, row.overrides)
        if c is not None:
            c = idx.resolve(c) if not row.overrides else c
        if not _try(c, params, join, "map", mm):
            join.rejected.append(f"map target {row.target} unusable")
        return join
    for c in direct_candidates(idx, rec)[:MAX_TRIES]:
        if _try(idx.resolve(c), params, join, "direct", mm):
            break
    return join


def join_base(idx: Index, rec: dict[str, Any], row: MapRow | None,
              by_name: dict[str, Join], join: Join) -> None:
    """Inherit the architecture of the Epoch "Base model" (or the map's base:<name>)."""
    bases = ([row.target[5:]] if row and row.target.startswith("base:")
             else list(rec.get("base_model") or []))
    params, mm = guard_reference(rec, row), is_multimodal(rec)
    for base in bases:
        base_join = next((by_name[k] for k in name_keys(base) if k in by_name), None)
        if base_join and base_join.arch:
            c = archsources.Candidate("base", base, None, base_join.arch)
            if _try(c, params, join, "base", mm):
                join.base = base
                return
        for c in idx.by_repo.get(base.lower(), []):
            if _try(idx.resolve(c), params, join, "base", mm):
                join.base = base
                return


def _join_bases(idx: Index, recs: list[dict[str, Any]], joins: list[Join],
                hand: dict[str, MapRow], by_name: dict[str, Join]) -> None:
    """Base-model inheritance, repeated until nothing changes (a base may itself inherit)."""
    changed = True
    while changed:
        changed = False
        for r, j in zip(recs, joins):
            row = hand.get(r["model"])
            if j.arch is None and not (row and row.target == "none"):
                j.rejected.clear()
                join_base(idx, r, row, by_name, j)
                changed = changed or j.arch is not None


def _hf_repo(rec: dict[str, Any], join: Join, row: MapRow | None = None) -> str | None:
    if row is not None and row.hf_repo:
        return row.hf_repo
    repos = hf_repos(rec)
    return repos[0] if repos else join.hf_repo


def _model(rec: dict[str, Any], slug: str, join: Join, row: MapRow | None = None,
           llmfit: dict[str, dict[str, Any]] | None = None) -> Model:
    record = {k: v for k, v in rec.items() if v is not None}
    if join.arch is not None and join.how == "base":  # tpscalc.catalog.sourcing reads it
        record["architecture_basis"] = f"base:{join.base}"
    repo = _hf_repo(rec, join, row)
    raw = (llmfit or {}).get((repo or "").lower())  # llmfit's entries by lower-case id
    arch = join.arch
    if arch is not None and arch.source.startswith("litgpt:") and raw:
        count = raw.get("parameters_raw")
        tied = archsources.tie_from_count(arch, count)
        if tied is not None:
            arch = tied
            record["tied_embeddings_source"] = (
                f"llmfit parameters_raw {int(count):,} of {raw['name']} (litgpt's configs "
                "carry no tie flag)")
    return Model.model_validate(_with_active({
        "name": rec["model"], "slug": slug, "parameters": float(rec["parameters"]),
        "organization": tuple(rec.get("organization") or ()),
        "publication_date": rec.get("publication_date"), "hf_repo": repo,
        "architecture": arch, "record": record}, raw))


# "Qwen3-30B-A3B", "LFM2.5-8B-A1B": the active size a name states, in billions.
ACTIVE_IN_NAME = re.compile(r"(?i)(?:^|[-_ ])A(\d+(?:\.\d+)?)B(?=$|[-_ ])")


def stated_active(name: str, llmfit: dict[str, Any] | None,
                  total: float) -> tuple[float | None, str | None]:
    """(active parameters, where from) of a mixture of experts without an architecture:
    llmfit's `active_parameters` of its repository, else the "A<n>B" of its name."""
    if llmfit and llmfit.get("is_moe") and llmfit.get("active_parameters"):
        active = float(llmfit["active_parameters"])
        if active < total:
            return active, f"llmfit active_parameters ({llmfit['name']})"
    m = ACTIVE_IN_NAME.search(name)
    if m and float(m.group(1)) * 1e9 < total:
        return float(m.group(1)) * 1e9, f"name ({m.group(0).strip('-_ ')})"
    return None, None


# Hugging Face model types (llmfit's `architecture`) that llama.cpp's convert_hf_to_gguf.py
# converts (https://github.com/ggml-org/llama.cpp/blob/master/convert_hf_to_gguf.py, its
# @ModelBase.register names), for the models the catalog has no architecture for; a repository
# with GGUF files in llmfit's list (`gguf_sources`) runs too.
LLAMA_CPP_TYPES = frozenset({
    "gpt2", "bloom", "gpt_neox", "falcon", "mpt", "t5", "cohere", "cohere2", "lfm2", "lfm2_moe",
    "lfm2_vl", "nemotron_h", "qwen3_5", "qwen3_5_moe", "gemma3n", "gemma4", "glm4v",
    "mistral3", "qwen2_vl", "granite", "granitemoehybrid", "olmo3", "exaone4", "hunyuan_v1_moe",
    "jamba", "falcon_h1", "mamba", "mamba2", "rwkv6", "rwkv7", "plamo2", "smollm3"})
# Names of Epoch AI's models (no Hugging Face entry, no architecture), or of the base models
# they were trained from, of families llama.cpp converts: GPT-2 (gpt2), BLOOM, GPT-NeoX/Pythia,
# Falcon, MPT, T5/mT5/ByT5/Flan-T5 (UnifiedQA: allenai/unifiedqa-t5-* checkpoints).
LLAMA_CPP_NAMES = re.compile(
    r"(?i)^(gpt-2\b|bloom|gpt-neox|pythia|falcon|mpt-|(m|by|flan-)?t5\b|unifiedqa)")


def _llama_cpp(fields: dict[str, Any], llmfit: dict[str, Any] | None) -> dict[str, Any]:
    """Model fields with `runs_in_llama_cpp` False (and the reason) for an architecture-less
    model that no evidence puts in llama.cpp."""
    if fields.get("architecture") is not None or fields.get("in_epoch_data") is False:
        return fields  # a lab's 2026 text-generation release: its page flags what is unknown
    family = str((llmfit or {}).get("architecture") or "")
    if family in LLAMA_CPP_TYPES or (llmfit or {}).get("gguf_sources"):
        return fields
    names = [fields["name"], *((fields.get("record") or {}).get("base_model") or [])]
    if not family and any(LLAMA_CPP_NAMES.search(n) for n in names):
        return fields
    why = (f"model type {family} has no llama.cpp converter and no GGUF file is listed"
           if family else "no architecture llama.cpp runs is known for it (no Hugging Face "
           "config, no GGUF file)")
    record = dict(fields.get("record") or {}, llama_cpp_reason=why)
    return dict(fields, runs_in_llama_cpp=False, record=record)


def _with_active(fields: dict[str, Any], llmfit: dict[str, Any] | None) -> dict[str, Any]:
    """Model fields with the stated active count added when there is no architecture, and
    `runs_in_llama_cpp` (see `_llama_cpp`)."""
    if fields.get("architecture") is not None:
        return fields
    fields = _llama_cpp(fields, llmfit)
    active, source = stated_active(fields["name"], llmfit, float(fields["parameters"]))
    if active is None:
        return fields
    record = dict(fields.get("record") or {}, parameters_active_source=source)
    return dict(fields, parameters_active_stated=active, record=record)


NATIVE_FILE = ROOT / "tools" / "data" / "native_formats.csv"


def load_natives(path: Path = NATIVE_FILE) -> dict[str, tuple[str, str]]:
    """tools/data/native_formats.csv: repository (lower case) → (file type, basis)."""
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    return {r["repo"].lower(): (r["format"], r["basis"]) for r in rows}


def _with_native(m: Model, folders: list[Path],
                 natives: dict[str, tuple[str, str]]) -> Model:
    """An Epoch model with the native format its own config.json declares (DeepSeek-V3's FP8)
    or the hand-kept file gives (Kimi K2 Thinking's INT4), as the recent models get theirs."""
    if m.hf_repo is None or m.file_weights is not None:
        return m
    found = recent_models.native_from_config(
        recent_models.load_config(m.hf_repo, folders) or {}) or natives.get(m.hf_repo.lower())
    if found is None:
        return m
    record = dict(m.record, native_format_basis=found[1], native_format_repo=m.hf_repo)
    return m.model_copy(update={"native_format": found[0], "record": record})


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    files = sorted(path.glob("*")) if path.is_dir() else [path]
    for f in files:
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest()


def _recent(shared: Path, recs: list[dict[str, Any]], llmfit: list[dict[str, Any]],
            idx: Index) -> tuple[list[dict[str, Any]], list[str]]:
    """The models after Epoch's last record (unslugged Model fields) and their report."""
    rules = recent_models.load_rules()
    sel = recent_models.select(llmfit, recs, rules)
    configs = recent_models.config_repos(idx)
    hand = recent_models.load_hand()
    joined = [recent_models.join(g, idx, configs, hand) for g in sel.groups]
    folders = [_sources(shared)["aiconfigurator"], HF_CONFIGS]
    hand_natives = load_natives()
    natives = [recent_models.native_format(g, folders, hand_natives) for g in sel.groups]
    out = []
    for g, j, (fmt, basis, shown_by) in zip(sel.groups, joined, natives):
        rec = recent_models.record(g, rules, basis, shown_by)
        out.append(_with_active({
            "name": rec["model"], "parameters": float(rec["parameters"]),
            "organization": tuple(rec["organization"]),
            "publication_date": rec.get("publication_date"), "hf_repo": g.repos[0],
            "architecture": j.arch, "record": rec, "in_epoch_data": False,
            "native_format": fmt}, g.primary))
    return out, recent_models.report_lines(sel, joined, [n for n, _, _ in natives])


def build(shared: Path) -> tuple[dict[str, Any], list[dict[str, Any]], list[Join]]:
    """The models.json document, the Epoch records and the join of each."""
    doc, recs, joins, _ = build_all(shared)
    return doc, recs, joins


def build_all(shared: Path) -> tuple[dict[str, Any], list[dict[str, Any]], list[Join],
                                     list[str]]:
    """`build`, and the report of the models after Epoch's last record."""
    src = _sources(shared)
    recs = epoch.open_language_models(src["epoch"])
    fixed = (archsources.load_aiconfigurator(src["aiconfigurator"])
             + archsources.load_aiconfigurator(HF_CONFIGS, "hfconfig")
             + archsources.load_litgpt(src["litgpt"]) + archsources.load_mlc(src["mlc"]))
    llmfit = archsources.load_llmfit(src["llmfit"], with_layers_only=False)
    idx = build_index(fixed, [e for e in llmfit if e.get("num_hidden_layers")])
    idx.llmfit_raw.update({e["name"]: e for e in llmfit})  # map rows may add the layer facts
    hand = load_map(MAP_FILE)
    joins = [join_direct(idx, r, hand.get(r["model"])) for r in recs]
    by_name: dict[str, Join] = {}
    for r, j in zip(recs, joins):
        for k in name_keys(r["model"]):
            by_name.setdefault(k, j)
    _join_bases(idx, recs, joins, hand, by_name)
    recent, recent_report = _recent(shared, recs, llmfit, idx)
    slugs = unique_slugs([r["model"] for r in recs] + [m["name"] for m in recent])
    lower = {k.lower(): v for k, v in idx.llmfit_raw.items()}
    folders = [_sources(shared)["aiconfigurator"], HF_CONFIGS]
    natives = load_natives()
    models = [_with_native(_model(r, s, j, hand.get(r["model"]), lower), folders, natives)
              .model_dump(mode="json", exclude_defaults=True)
              for r, s, j in zip(recs, slugs, joins)]
    models += [Model.model_validate({"slug": s, **m}).model_dump(mode="json", exclude_defaults=True)
               for m, s in zip(recent, slugs[len(recs):])]
    doc = {
        "generated_by": "tools/build_models.py",
        "sources": [
            {"name": "Epoch AI, Data on AI Models", "url": "https://epoch.ai/data/ai-models",
             "license": "CC-BY-4.0", "file": "epoch/all_ai_models.csv",
             "sha256": _sha256(src["epoch"])},
            {"name": "aiconfigurator model configs (verbatim HF config.json)",
             "license": "Apache-2.0", "file": "aiconfigurator_model_configs/",
             "sha256": _sha256(src["aiconfigurator"])},
            {"name": ("Hugging Face config.json files kept in the repository "
                      "(URL per file in SOURCES.csv)"),
             "file": "tools/data/hf_configs/", "sha256": _sha256(HF_CONFIGS)},
            {"name": "litgpt configs", "license": "Apache-2.0", "file": "litgpt_configs.json",
             "sha256": _sha256(src["litgpt"])},
            {"name": "MLC-LLM model presets", "license": "Apache-2.0",
             "file": "mlc_llm_model_presets.json", "sha256": _sha256(src["mlc"])},
            {"name": "llmfit HF model list v1.1.17", "license": "MIT",
             "file": "llmfit_hf_models_v1.1.17.json", "sha256": _sha256(src["llmfit"])},
            {"name": "hand-kept map", "file": "tools/data/model_architecture_map.csv"},
            {"name": "labs and rules for the models after Epoch AI's last record",
             "file": "tools/data/recent_models.csv"},
        ],
        "models": models,
    }
    return doc, recs, joins, recent_report


def report(recs: list[dict[str, Any]], joins: list[Join], out: Any = sys.stdout) -> float:
    """Print what matched (by source and how), what did not, what the guard rejected; return
    the share of models published since 2023 that have an architecture."""
    got = [j for j in joins if j.arch]
    print(f"architecture for {len(got)} of {len(recs)} models", file=out)
    print("by source:", dict(Counter(j.arch.source.split(":")[0] for j in got if j.arch)), file=out)
    print("by join:", dict(Counter(j.how for j in got)), file=out)
    recent = [(r, j) for r, j in zip(recs, joins) if str(r.get("publication_date") or "") >= "2023"]
    share = sum(1 for _, j in recent if j.arch) / len(recent)
    print(f"since 2023: {share:.1%} of {len(recent)} models", file=out)
    for r, j in zip(recs, joins):
        if j.rejected:
            print(f"guard rejected for {r['model']} ({r['parameters'] / 1e9:.2f} B): "
                  + ", ".join(j.rejected[:3]) + (" ..." if len(j.rejected) > 3 else ""), file=out)
    missing = [r["model"] for r, j in zip(recs, joins) if not j.arch]
    print(f"no architecture ({len(missing)}): " + "; ".join(missing), file=out)
    return share


def dumps(doc: dict[str, Any]) -> str:
    """The JSON text written to models.json (stable key order, one model per few lines)."""
    return json.dumps(doc, ensure_ascii=False, indent=1, sort_keys=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Build models.json and print the join report."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--shared", type=Path, default=DEFAULT_SHARED)
    ap.add_argument("--out", type=Path, default=OUT_FILE)
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    doc, recs, joins, recent_report = build_all(args.shared)
    if not args.quiet:
        report(recs, joins)
    args.out.write_text(dumps(doc), encoding="utf-8")
    if args.out == OUT_FILE:  # the committed catalog: its report beside the cross-check's
        RECENT_REPORT.write_text("\n".join(recent_report) + "\n", encoding="utf-8")
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
