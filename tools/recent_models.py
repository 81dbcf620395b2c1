"""Models released after Epoch AI's last record, from llmfit's Hugging Face model list.

Epoch AI's data stops at its last record (December 2025 in the committed CSV). The labs named
in tools/data/recent_models.csv keep publishing on Hugging Face; llmfit's list (name, release
date, safetensors parameter count, layer facts) holds those repositories. This module takes
each lab's OWN releases dated from the month of Epoch's last record on (Epoch's coverage of
its last month is partial; the rules file's "since" keeps that start when a newer Epoch CSV
arrives, so a model Epoch still lacks is not dropped), one entry per model:

- base and instruct checkpoints (`-Base`, `-it`, `-Instruct`, `-pt`) are one model, the
  instruct one first; NVIDIA's `-BF16` suffix names the release itself;
- re-quantized copies (`-FP8`, `-NVFP4`, `-GGUF`, `-MLX-4bit`, AWQ, GPTQ, ...) by anyone are
  not models but evidence of the formats a model is published in (`published_formats`); the
  lab's own FP8 copy, an FP8 config, Gemma's QAT Q4_0 checkpoints and BitNet's ternary weights
  set the model's native format (`Model.native_format`);
- drafts (DFlash, DSpark, Eagle, assistant heads), adapters, non-text pipelines, diffusion
  language models, and models built on another lab's architecture are skipped, each with its
  reason (tools/reports/recent_models.md);
- a model Epoch already has (its Hugging Face repository in Epoch's links, or the same name)
  comes from Epoch, so a newer Epoch CSV replaces these entries when the build is re-run.

Architecture: a verbatim config.json of the model or of a copy of it (same shape), else
llmfit's facts, each accepted only when its computed count matches llmfit's count of the
release (the guard of tools/matching.py). Facts of a family neither source expresses (layer
patterns, compressed attention) are listed in `Architecture.unexpressed`, so estimates are
flagged approximated with the reason; without an architecture, memory is parameters × bits.
"""
from __future__ import annotations

import csv
import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import archsources
from matching import Index, guard, hf_repos, name_keys, stripped_key

from tpscalc.catalog.schema import Architecture

RULES_FILE = Path(__file__).resolve().parent / "data" / "recent_models.csv"
HAND_FILE = Path(__file__).resolve().parent / "data" / "recent_architectures.csv"
HF = "https://huggingface.co/"

# Pipelines of models that write text (llmfit's `pipeline_tag`; "unknown" = not stated).
TEXT_PIPELINES = frozenset({"text-generation", "image-text-to-text", "any-to-any", "unknown",
                            "text2text-generation"})
MULTIMODAL_PIPELINES = frozenset({"image-text-to-text", "any-to-any"})
# Name tokens (split at "-") of a re-quantized copy, and the format each names.
COPY_TOKENS = {"fp8": "FP8", "nvfp4": "NVFP4", "mxfp4": "MXFP4", "mxfp8": "MXFP8", "fp4": "FP4",
               "int4": "INT4", "int8": "INT8", "awq": "AWQ", "gptq": "GPTQ", "gguf": "GGUF",
               "mlx": "MLX", "4bit": "4-bit", "6bit": "6-bit", "8bit": "8-bit", "w4a16": "W4A16",
               "bnb": "bitsandbytes", "ct": "compressed-tensors", "dynamic": "FP8",
               "static": "FP8", "pertensor": "FP8", "bf16": "BF16"}
# Trailing tokens that name a checkpoint of the same model rather than another model.
SAME_MODEL_TOKENS = frozenset({"it", "instruct", "base", "pt", "bf16"})
DRAFT = re.compile(r"dflash|dspark|eagle\d*|-assistant$|speculator|-mtp$", re.IGNORECASE)
ADAPTER = re.compile(r"lora|adapter|peft", re.IGNORECASE)
DIFFUSION = re.compile(r"diffusion|llada|wedlm", re.IGNORECASE)
QAT_Q4_0 = re.compile(r"-qat-q4_0", re.IGNORECASE)
# Architecture families (llmfit's `architecture`, matched as substrings) and the lab that owns
# each: a lab's repository of another lab's family is a fine-tune of that lab's model.
FAMILY_OWNERS = (("qwen", "qwen"), ("gemma", "google"), ("llama", "meta-llama"),
                 ("mistral", "mistralai"), ("deepseek", "deepseek-ai"), ("glm", "zai-org"),
                 ("minimax", "minimaxai"), ("kimi", "moonshotai"), ("nemotron", "nvidia"),
                 ("granite", "ibm-granite"), ("lfm2", "liquidai"), ("olmo", "allenai"),
                 ("molmo", "allenai"), ("bailing", "inclusionai"), ("ernie", "baidu"),
                 ("hunyuan", "tencent"), ("gpt_oss", "openai"), ("phi", "microsoft"))
# Families whose every layer is plain (grouped-query) attention with one FFN: llmfit's facts
# then describe every tensor and the whole KV cache.
PLAIN_FAMILIES = frozenset({"llama", "mistral", "qwen2", "qwen3", "qwen3_moe", "granite",
                            "granitemoe", "olmo2", "phi3", "bitnet", "youtu"})
# Facts llmfit's list (and the converters) cannot express for the 2026 families: never guessed,
# the architecture lists them in `unexpressed` and the pages say why (report/approximation.py).
RECENT_UNEXPRESSED: dict[str, tuple[str, ...]] = {
    "qwen3_5": ("linear_attention_layers",), "qwen3_5_moe": ("linear_attention_layers",),
    "qwen3_5_moe_text": ("linear_attention_layers",), "qwen4_exp": ("linear_attention_layers",),
    "gemma4": ("sliding_window",), "gemma4_unified": ("sliding_window",),
    "glm4_moe_lite": ("kv_lora_rank",), "glm_moe_dsa": ("kv_lora_rank",),
    "glm5_next": ("kv_lora_rank",), "kimi_k25": ("kv_lora_rank",), "kimi_k3": ("kv_lora_rank",),
    "nemotron_h": ("linear_attention_layers",), "lfm2": ("linear_attention_layers",),
    "lfm2_moe": ("linear_attention_layers",), "lfm2_vl": ("linear_attention_layers",),
    "bailing_hybrid": ("linear_attention_layers",),
    "olmo_hybrid": ("linear_attention_layers",), "olmo3": ("sliding_window",),
}
# DeepSeek-V4 caches a 128-token sliding window plus compressed KV at the per-layer
# `compress_ratios` (config.json): modelled from those ratios (estimate/layers.py
# compressed_kv_values); a model of the family without them (llmfit's facts) is flagged.
COMPRESSED_ATTENTION = frozenset({"deepseek_v4", "deepseek_v41"})
UNKNOWN_LAYOUT = "attention_layout"  # a family this repository does not model
NO_ARCH = "no architecture in llmfit's list"


@dataclass(frozen=True)
class Rules:
    """tools/data/recent_models.csv: labs (id → shown name), repositories taken and skipped."""

    labs: dict[str, str]
    take: dict[str, str]
    skip: dict[str, str]
    since: str = "9999"  # releases from this date on are considered (with Epoch's last month)


def load_rules(path: Path = RULES_FILE) -> Rules:
    """The rules file (comment lines start with "#")."""
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    by_kind: dict[str, dict[str, str]] = defaultdict(dict)
    for r in rows:
        by_kind[r["kind"]][r["value"]] = r["note"]
    labs = {k.lower(): v for k, v in by_kind["lab"].items()}
    since = min(by_kind["since"] or {"9999": ""})
    return Rules(labs, dict(by_kind["take"]), dict(by_kind["skip"]), since)


def split_copy(basename: str) -> tuple[str, list[str]]:
    """("Qwen3.5-27B-GPTQ-Int4") → ("Qwen3.5-27B", ["GPTQ", "INT4"]): the name without the
    trailing tokens of a re-quantized copy, and the formats they name (BF16 is no copy)."""
    parts = basename.split("-")
    formats: list[str] = []
    while len(parts) > 1 and parts[-1].lower() in COPY_TOKENS:
        fmt = COPY_TOKENS[parts.pop().lower()]
        if fmt != "BF16":
            formats.insert(0, fmt)
    return "-".join(parts), formats


def model_key(basename: str) -> str:
    """The name shared by a model's checkpoints: copy and base/instruct suffixes removed."""
    parts = split_copy(basename)[0].split("-")
    while len(parts) > 1 and parts[-1].lower() in SAME_MODEL_TOKENS:
        parts.pop()
    return "-".join(parts).lower()


def display_name(basename: str) -> str:
    """The catalog name of a model: its repository name less checkpoint and copy suffixes."""
    name = basename
    if QAT_Q4_0.search(name):
        return re.sub(r"-unquantized$", "", name, flags=re.IGNORECASE)
    parts = split_copy(name)[0].split("-")
    while len(parts) > 1 and parts[-1].lower() in SAME_MODEL_TOKENS:
        parts.pop()
    return "-".join(parts)


def family_owner(family: str) -> str | None:
    """The lab whose architecture `family` (llmfit's name) is, if any."""
    fam = family.lower()
    return next((org for part, org in FAMILY_OWNERS if part in fam), None)


@dataclass
class Group:
    """One model: its checkpoints (primary first) and the copies that reveal its formats."""

    key: str
    entries: list[dict[str, Any]] = field(default_factory=list)
    copies: list[tuple[str, list[str]]] = field(default_factory=list)  # (repo, formats)

    @property
    def primary(self) -> dict[str, Any]:
        """The checkpoint the page names: instruct (or plain) before base."""
        def rank(e: dict[str, Any]) -> tuple[int, int, str]:
            tail = e["name"].rsplit("-", 2)
            is_base = any(t.lower() in ("base", "pt") for t in tail[1:])
            return (1 if is_base else 0, -int(e.get("hf_downloads") or 0), e["name"])
        return min(self.entries, key=rank)

    @property
    def repos(self) -> list[str]:
        """The checkpoints' repositories, primary first."""
        first = self.primary["name"]
        return [first] + sorted(e["name"] for e in self.entries if e["name"] != first)


@dataclass
class Selection:
    """What the selection took (groups) and skipped (repository → reason)."""

    groups: list[Group]
    skipped: dict[str, str]
    cutoff: str  # Epoch's last record
    since: str  # the first day of its month: releases from then on are considered
    considered: int


def _skip_reason(e: dict[str, Any], rules: Rules) -> str | None:
    """Why a lab's repository is not a model of its own (None: it is one, or a copy)."""
    repo, family = e["name"], str(e.get("architecture") or "")
    base = repo.split("/", 1)[1]
    org = repo.split("/", 1)[0].lower()
    if repo in rules.skip:
        return f"by hand: {rules.skip[repo]}"
    if DRAFT.search(base):
        return "draft or assistant head (speculative decoding)"
    if ADAPTER.search(base):
        return "adapter"
    if not family or family == "unknown":
        return NO_ARCH
    if str(e.get("pipeline_tag") or "unknown") not in TEXT_PIPELINES:
        return f"writes no text (pipeline {e.get('pipeline_tag')})"
    if DIFFUSION.search(family) or DIFFUSION.search(base):
        return "diffusion language model (the speed model is for autoregressive decoding)"
    owner = family_owner(family)
    if owner is not None and owner != org and repo not in rules.take:
        return f"built on another lab's architecture ({family}): a fine-tune"
    return None


def select(llmfit: list[dict[str, Any]], epoch_recs: list[dict[str, Any]],
           rules: Rules) -> Selection:
    """The labs' own releases after Epoch's last record, grouped, minus Epoch's models."""
    cutoff = max(str(r.get("publication_date") or "") for r in epoch_recs)
    since = min(cutoff[:7] + "-01", rules.since)
    epoch_repos = {repo.lower() for r in epoch_recs for repo in hf_repos(r)}
    epoch_names = {k for r in epoch_recs for k in name_keys(r["model"])}
    epoch_names |= {stripped_key(r["model"]) for r in epoch_recs}
    groups: dict[str, Group] = {}
    skipped: dict[str, str] = {}
    copies: list[tuple[dict[str, Any], str, list[str]]] = []
    unsized: list[tuple[str, dict[str, Any]]] = []
    considered = 0
    for e in llmfit:
        repo = str(e["name"])
        org = repo.split("/", 1)[0].lower() if "/" in repo else ""
        base = repo.split("/", 1)[-1]
        formats = split_copy(base)[1]
        if formats and not QAT_Q4_0.search(base):
            copies.append((e, model_key(base), formats))
            if org not in rules.labs:
                continue
        if org not in rules.labs:
            continue
        date = str(e.get("release_date") or "")[:10]
        if date < since and repo not in rules.take:
            continue
        considered += 1
        if formats and not QAT_Q4_0.search(base):
            skipped[repo] = "re-quantized copy (" + ", ".join(formats) + ")"
            continue
        reason = _skip_reason(e, rules)
        key = f"{org}/{model_key(base) if not QAT_Q4_0.search(base) else base.lower()}"
        if reason == NO_ARCH:  # a checkpoint of a model taken, or nothing to size
            unsized.append((key, e))
        elif reason is not None:
            skipped[repo] = reason
        else:
            groups.setdefault(key, Group(key)).entries.append(e)
    for key, e in unsized:
        if key in groups:
            groups[key].entries.append(e)
        else:
            skipped[str(e["name"])] = NO_ARCH
    by_name: dict[str, Group] = {}
    for g in groups.values():
        by_name.setdefault(g.key.split("/", 1)[1], g)
    for e, key, formats in copies:
        g = by_name.get(key)
        if g is not None:
            g.copies.append((str(e["name"]), formats))
    kept = []
    for g in sorted(groups.values(), key=lambda g: g.key):
        name = display_name(g.primary["name"].split("/", 1)[1])
        if ({r.lower() for r in g.repos} & epoch_repos
                or set(name_keys(name)) & epoch_names or stripped_key(name) in epoch_names):
            for r in g.repos:
                skipped[r] = "already in Epoch AI's data (taken from there)"
            continue
        g.copies.sort()
        kept.append(g)
    return Selection(kept, skipped, cutoff, since, considered)


@dataclass(frozen=True)
class Joined:
    """A group's architecture, where it came from, and why it is approximated (if it is)."""

    arch: Architecture | None
    note: str  # why there is no architecture, or ""
    rejected: tuple[str, ...] = ()


def _flags(arch: Architecture, family: str, from_llmfit: bool) -> Architecture:
    """`arch` with the facts its source could not express listed in `unexpressed`."""
    extra: tuple[str, ...] = ()
    if from_llmfit:
        extra = RECENT_UNEXPRESSED.get(family, ())
        if not extra and family not in PLAIN_FAMILIES and not arch.unexpressed:
            extra = (UNKNOWN_LAYOUT,)
    if family in COMPRESSED_ATTENTION and not arch.compress_ratios:
        extra += ("compressed_attention",)
    missing = tuple(dict.fromkeys(arch.unexpressed + extra))
    return arch.model_copy(update={"unexpressed": missing}) if missing != arch.unexpressed else arch


def shape_key(repo: str) -> str:
    """The key under which checkpoints of one shape meet: `model_key`, less a QAT suffix (a
    quantization-aware-trained checkpoint has its model's tensors)."""
    base = re.sub(r"-qat-q4_0.*$", "", repo.rsplit("/", 1)[-1], flags=re.IGNORECASE)
    return model_key(base)


def config_repos(idx: Index) -> dict[str, list[str]]:
    """Repositories with a verbatim config.json, by `shape_key` (copies by anyone included)."""
    out: dict[str, list[str]] = defaultdict(list)
    for repo, cands in sorted(idx.by_repo.items()):
        if any(c.source in archsources.VERBATIM for c in cands):
            out[shape_key(repo)].append(repo)
    return out


@dataclass(frozen=True)
class HandArch:
    """One row of tools/data/recent_architectures.csv."""

    target: str  # "hand", "llmfit" or "like:<repo>"
    overrides: dict[str, Any]
    note: str


def load_hand(path: Path = HAND_FILE) -> dict[str, HandArch]:
    """The hand-kept architectures by repository (lower case)."""
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    return {r["repo"].lower(): HandArch(r["target"], json.loads(r["overrides"] or "{}"), r["note"])
            for r in rows}


def _hand_arch(repo: str, h: HandArch, idx: Index) -> Architecture | str:
    """The architecture a hand-kept row describes, or why it cannot."""
    if h.target == "hand":
        return archsources._validated(dict(h.overrides, source=f"hand:{repo}"))
    if h.target == "llmfit":
        raw = idx.llmfit_raw.get(repo)
        if raw is None:
            return f"{repo} is not in llmfit's list"
        return archsources.arch_from_llmfit(raw, h.overrides, tolerance=0.05)
    like = h.target.removeprefix("like:").lower()
    found = [c.arch for c in idx.by_repo.get(like, [])
             if c.source in archsources.VERBATIM and c.arch is not None]
    return found[0] if found else f"no verbatim config of {like}"


def hand_join(g: Group, idx: Index, hand: dict[str, HandArch]) -> Joined | None:
    """The group's hand-kept architecture (tools/data/recent_architectures.csv), if it has one."""
    e = g.primary
    ref = float(e.get("parameters_raw") or 0)
    mm = str(e.get("pipeline_tag")) in MULTIMODAL_PIPELINES
    for r in g.repos:
        h = hand.get(r.lower())
        if h is None:
            continue
        arch = _hand_arch(r, h, idx)
        if isinstance(arch, str):
            return Joined(None, f"hand-kept architecture unusable: {arch}")
        if ref and not guard(arch.params_total or 0, ref, mm):
            return Joined(None, "hand-kept architecture fails the guard "
                                f"({(arch.params_total or 0) / 1e9:.2f} B)")
        return Joined(_flags(arch, str(e.get("architecture") or ""), False), "")
    return None


def join(g: Group, idx: Index, configs: dict[str, list[str]] | None = None,
         hand: dict[str, HandArch] | None = None) -> Joined:
    """The architecture from the hand-kept file, a verbatim config of the model or a copy, else
    llmfit's facts."""
    e = g.primary
    family = str(e.get("architecture") or "")
    ref = float(e.get("parameters_raw") or 0)
    mm = str(e.get("pipeline_tag")) in MULTIMODAL_PIPELINES
    by_hand = hand_join(g, idx, hand or {})
    if by_hand is not None:
        return by_hand
    repos = g.repos + [r for r, _ in g.copies]
    repos += (configs or {}).get(shape_key(g.primary["name"]), [])
    verbatim = [c for r in repos for c in idx.by_repo.get(r.lower(), [])
                if c.source in archsources.VERBATIM and c.arch is not None]
    verbatim.sort(key=lambda c: archsources.TRUST.index(c.source))  # stable: own repos first
    rejected: list[str] = []
    for c in verbatim:
        assert c.arch is not None
        if ref and guard(c.arch.params_total or 0, ref, mm):
            return Joined(_flags(c.arch, family, False), "")
        rejected.append(f"{c.label} ({(c.arch.params_total or 0) / 1e9:.2f} B)")
    why = "no parameter count in llmfit's list"
    for r in g.repos:
        raw = idx.llmfit_raw.get(r)
        if raw is None or not ref:
            continue
        arch = archsources.arch_from_llmfit(raw)
        if isinstance(arch, str):
            why = arch
            continue
        if guard(arch.params_total or 0, ref, mm):
            return Joined(_flags(arch, family, True), "", tuple(rejected))
        rejected.append(f"llmfit:{r} ({(arch.params_total or 0) / 1e9:.2f} B)")
    return Joined(None, f"llmfit facts unusable: {why}", tuple(rejected))


def load_config(repo: str, folders: list[Path]) -> dict[str, Any] | None:
    stem = repo.replace("/", "--", 1)
    for folder in folders:
        path = folder / f"{stem}_config.json"
        if path.exists():
            return dict(json.loads(path.read_text()))
    return None


# Why a model's native format is what it is: a basis (translated on the page by
# tpscalc.report.provenance.NATIVE_BASES) and the repository that shows it.
NATIVE_BASES = ("qat_q4_0", "ternary", "fp4_experts", "fp8_config", "fp8_repo", "int4_config")


def native_from_config(cfg: dict[str, Any]) -> tuple[str, str] | None:
    """(llama.cpp file type, basis) of the quantized weights a config.json declares, or None."""
    quant = cfg.get("quantization_config") or (cfg.get("text_config") or {}).get(
        "quantization_config") or {}
    if quant.get("quant_method") == "fp8":
        if str(cfg.get("expert_dtype", "")).lower() == "fp4":  # MXFP4 experts, Q8_0 rest
            return "MXFP4_MOE", "fp4_experts"
        return "Q8_0", "fp8_config"  # llama.cpp has no FP8 file type: Q8_0 is nearest
    if quant.get("quant_method") == "compressed-tensors":
        for group in (quant.get("config_groups") or {}).values():
            w = group.get("weights") or {}
            if (w.get("num_bits") == 4 and w.get("type") == "int" and w.get("symmetric")
                    and w.get("group_size") == 32):
                # symmetric INT4 in groups of 32 with one scale: Q4_0's block, exactly
                return "Q4_0", "int4_config"
    return None


def native_format(g: Group, config_folders: list[Path],
                  hand: dict[str, tuple[str, str]] | None = None) -> tuple[str | None, str, str]:
    """(llama.cpp file type, basis, repository) of a model released quantized, else
    (None, "", ""). Basis: one of NATIVE_BASES. `hand`: tools/data/native_formats.csv (repository
    in lower case → (file type, basis)), for a release whose config.json the build lacks."""
    e = g.primary
    repo, org = str(e["name"]), str(e["name"]).split("/", 1)[0]
    if QAT_Q4_0.search(repo):  # quantization-aware training for Q4_0: Q4_0 keeps its quality
        return "Q4_0", "qat_q4_0", repo
    if str(e.get("architecture")) == "bitnet":  # ternary weights: TQ2_0 holds them losslessly
        return "TQ2_0", "ternary", repo
    for r in g.repos:
        found = native_from_config(load_config(r, config_folders) or {})
        if found is not None:
            return found[0], found[1], r
    for r in g.repos:
        if r.lower() in (hand or {}):
            fmt, basis = (hand or {})[r.lower()]
            return fmt, basis, r
    own_fp8 = [r for r, fmts in g.copies if "FP8" in fmts and r.split("/", 1)[0] == org]
    if own_fp8:
        return "Q8_0", "fp8_repo", own_fp8[0]
    return None, "", ""


def record(g: Group, rules: Rules, native_basis: str = "",
           native_repo: str = "") -> dict[str, Any]:
    """The page's record of a model Epoch does not have yet: what llmfit's list states."""
    e = g.primary
    out: dict[str, Any] = {
        "model": display_name(str(e["name"]).split("/", 1)[1]),
        "organization": [rules.labs[str(e["name"]).split("/", 1)[0].lower()]],
        "publication_date": str(e.get("release_date") or "")[:10] or None,
        "parameters": int(e.get("parameters_raw") or 0),
        "link": [HF + g.repos[0]],  # one URL: the page links it (the others are listed)
        "hugging_face_checkpoints": list(g.repos),
        "architecture_family": e.get("architecture"),
        "max_context": e.get("context_length"),
        "pipeline": e.get("pipeline_tag"),
        "license": e.get("license"),
        "published_formats": sorted({f for _, fmts in g.copies for f in fmts}),
        "quantized_copies": [r for r, _ in g.copies],
        "native_format_basis": native_basis or None,
        "native_format_repo": native_repo or None,
        "source": "llmfit HF model list v1.1.17 (not yet in Epoch AI's data)",
    }
    return {k: v for k, v in out.items() if v not in (None, [], "")}


def report_lines(sel: Selection, joined: list[Joined], native: list[str | None]) -> list[str]:
    """tools/reports/recent_models.md: what was taken and skipped, with counts and reasons."""
    out = ["# Models after Epoch AI's last record (tools/recent_models.py)", "",
           (f"Epoch AI's last record: {sel.cutoff}. Lab repositories dated from {sel.since} on "
            f"(or taken by hand): {sel.considered}; models taken: {len(sel.groups)}; "
            f"repositories skipped: {len(sel.skipped)}."), "",
           "## Skipped, by reason", ""]
    kinds = Counter(re.sub(r" \(.*", "", r).split(":")[0] for r in sel.skipped.values())
    out += [f"- {k}: {n}" for k, n in sorted(kinds.items(), key=lambda t: (-t[1], t[0]))]
    arch = sum(1 for j in joined if j.arch is not None)
    flagged = sum(1 for j in joined if j.arch is not None and j.arch.unexpressed)
    out += ["", (f"## Taken ({len(sel.groups)}: architecture for {arch}, of which {flagged} "
                 f"flagged approximated; {len(sel.groups) - arch} sized from the parameter "
                 "count)"), "",
            "| model | checkpoints | architecture | native format |", "|---|---|---|---|"]
    for g, j, n in zip(sel.groups, joined, native):
        a = (j.arch.source + (" (approximated: " + ", ".join(j.arch.unexpressed) + ")"
                              if j.arch.unexpressed else "")) if j.arch else j.note
        out.append(f"| {display_name(g.primary['name'].split('/', 1)[1])} | "
                   f"{', '.join(g.repos)} | {a} | {n or ''} |")
    out += ["", "## Skipped repositories", ""]
    out += [f"- {r}: {why}" for r, why in sorted(sel.skipped.items())]
    return out
