"""Join Epoch AI model names to architecture candidates, guarded by the parameter count.

Rule (the guard): a candidate is accepted only when the parameter count computed from its
architecture (`estimate.tensors.parameter_counts`) lies within ±15 % of Epoch's figure, so a
name that matches the wrong size ("Llama 3.1-405B" vs the 8B config) is rejected and logged.
Multimodal models (see MULTIMODAL_TEXT_SHARE) are matched on their text decoder, which may be
as small as half of Epoch's count (the rest being vision/audio towers); text models are not.
Candidates are tried in this order: the hand-kept map; then Hugging Face repository ids and
names that match (sources in order of trust, then exact names before suffix-stripped ones,
then downloads); then the architecture of the model's Epoch "Base model".

Sourced guard overrides: where Epoch's parameter figure is demonstrably wrong for the model (a
typo, the LLM's nominal size, the wrong variant), a map row may put the published count of THIS
model in its overrides JSON under the reserved key "published_params" (an integer, parameters);
its note must cite the source that states it (a URL). The guard then checks the architecture
against that count instead of Epoch's (same tolerances, multimodal rule included); the model's
record keeps Epoch's figure. The override only unblocks a join: it never makes a wrong one pass,
since the architecture must still reproduce the published count.

Sourced link overrides: where Epoch's links name the wrong Hugging Face repository (Llama
3.1-70B's pointing at the 8B), the reserved overrides key "hf_repo" names the right one; its
note must cite it (a URL).
"""
from __future__ import annotations

import csv
import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from archsources import TRUST, VERBATIM, Candidate, llmfit_candidate

from tpscalc.catalog.slug import compact

GUARD_TOLERANCE = 0.15  # accepted: |computed / Epoch - 1| <= 15 %
# Multimodal models (Epoch Domain lists one of these): the architecture describes the text
# decoder only (what llama.cpp loads as the model; towers go to a separate mmproj file), while
# Epoch counts the vision/audio towers too. Published towers are smaller than their decoder:
# LLaVA-1.5-13B 0.3 B CLIP on 13 B, Llama 3.2 Vision 90B 18 B on 70.6 B, InternVL 1.5 5.9 B
# InternViT on 19.9 B, so the decoder is accepted from 50 % of Epoch's count up to +15 %.
# A tower larger than the decoder (CogVLM's visual expert) is rejected.
MULTIMODAL_DOMAINS = frozenset({"Vision", "Multimodal", "Speech", "Audio", "Video"})
MULTIMODAL_TEXT_SHARE = 0.5
_SUFFIX = re.compile(r"(?:-(?:hf|base|instruct|chat|it|pt|v0\.1))+$", re.IGNORECASE)
_HF_REPO = re.compile(r"huggingface\.co/([\w.-]+/[\w.-]+)")
_NOT_REPOS = frozenset({"spaces", "datasets", "papers", "blog", "docs", "collections", "models"})


def name_keys(name: str) -> list[str]:
    """Compact match keys of an Epoch or source name: whole, without "(...)", the "(...)" alone."""
    base = name.rsplit("/", 1)[-1]
    keys = [compact(base)]
    outer = re.sub(r"\([^)]*\)", " ", base)
    keys.append(compact(outer))
    keys += [compact(p) for p in re.findall(r"\(([^)]*)\)", base)]
    return [k for i, k in enumerate(keys) if k and k not in keys[:i]]


def stripped_key(name: str) -> str:
    """Compact key without a trailing -hf/-base/-instruct/-chat/-it and a leading "Meta-"."""
    base = name.rsplit("/", 1)[-1]
    base = re.sub(r"^meta-", "", _SUFFIX.sub("", base), flags=re.IGNORECASE)
    return compact(base)


def hf_repos(rec: dict[str, Any]) -> list[str]:
    """Hugging Face model repository ids named in an Epoch record's links and notes."""
    texts = list(rec.get("link") or []) + [str(rec.get("accessibility_notes") or "")]
    out: list[str] = []
    for text in texts:
        for repo in _HF_REPO.findall(text):
            repo = repo.rstrip(".")
            if repo.split("/")[0].lower() not in _NOT_REPOS and repo not in out:
                out.append(repo)
    return out


@dataclass(frozen=True)
class MapRow:
    """One row of the hand-kept map: Epoch name → "source:key", "base:<Epoch name>" or "none"."""

    target: str
    overrides: dict[str, Any]
    note: str
    published_params: int | None = None  # the guard's reference instead of Epoch's figure
    hf_repo: str | None = None  # the model's own repository where Epoch's links name another


PUBLISHED_KEY = "published_params"  # reserved overrides key (see the module docstring)
REPO_KEY = "hf_repo"  # reserved overrides key: the model's Hugging Face repository


def _map_row(r: dict[str, str]) -> MapRow:
    """One MapRow; a published count is taken out of the overrides and must cite a URL."""
    overrides = json.loads(r["overrides"] or "{}")
    published = overrides.pop(PUBLISHED_KEY, None)
    if published is not None:
        if not isinstance(published, int) or published <= 0:
            raise ValueError(f"{r['epoch_name']}: {PUBLISHED_KEY} must be a positive integer")
        if "http" not in (r["note"] or ""):
            raise ValueError(f"{r['epoch_name']}: {PUBLISHED_KEY} needs a source URL in the note")
    repo = overrides.pop(REPO_KEY, None)
    if repo is not None and (not isinstance(repo, str) or "/" not in repo
                             or "http" not in (r["note"] or "")):
        raise ValueError(f"{r['epoch_name']}: {REPO_KEY} must be owner/name, "
                         "with a URL in the note")
    return MapRow(r["target"], overrides, r["note"], published, repo)


def load_map(path: Path) -> dict[str, MapRow]:
    """The hand-kept map (columns: epoch_name, target, overrides (JSON), note)."""
    with path.open(newline="", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f)
                if r["epoch_name"] and not r["epoch_name"].startswith("#")]
    return {r["epoch_name"]: _map_row(r) for r in rows}


def guard_reference(rec: dict[str, Any], row: MapRow | None) -> float:
    """The count the guard checks against: the map's sourced published count, else Epoch's."""
    if row is not None and row.published_params is not None:
        return float(row.published_params)
    return float(rec["parameters"])


@dataclass
class Index:
    """Candidates of all sources by label, repository id and name keys."""

    by_label: dict[str, Candidate] = field(default_factory=dict)
    by_repo: dict[str, list[Candidate]] = field(default_factory=lambda: defaultdict(list))
    by_key: dict[str, list[Candidate]] = field(default_factory=lambda: defaultdict(list))
    by_stripped: dict[str, list[Candidate]] = field(default_factory=lambda: defaultdict(list))
    llmfit_raw: dict[str, dict[str, Any]] = field(default_factory=dict)

    def add(self, c: Candidate) -> None:
        """Index one candidate (llmfit's are added unconverted, see `resolve`)."""
        self.by_label[c.label] = c
        if c.repo:
            self.by_repo[c.repo.lower()].append(c)
        for k in name_keys(c.key if c.source not in VERBATIM else (c.repo or c.key)):
            self.by_key[k].append(c)
        self.by_stripped[stripped_key(c.repo or c.key)].append(c)

    def resolve(self, c: Candidate) -> Candidate:
        """The converted candidate (llmfit entries convert on first use)."""
        if c.source == "llmfit" and c.arch is None and not c.why_none:
            c = llmfit_candidate(self.llmfit_raw[c.key])
            self.by_label[c.label] = c
        return c


def build_index(fixed: list[Candidate], llmfit: list[dict[str, Any]]) -> Index:
    """An Index of converted candidates plus llmfit's raw entries."""
    idx = Index()
    for c in fixed:
        idx.add(c)
    for e in llmfit:
        idx.llmfit_raw[e["name"]] = e
        idx.add(Candidate("llmfit", e["name"], e["name"], None, "",
                          int(e.get("hf_downloads") or 0)))
    return idx


def _order(c: Candidate, tier: int, dev_id: str) -> tuple[int, ...]:
    """Trust of the source, match tier, developer's own repo, shortest name, most downloads."""
    org = (c.repo or "").split("/")[0].lower()
    return (TRUST.index(c.source), tier, 0 if dev_id and org == dev_id.lower() else 1,
            len(c.key), -c.downloads)


def direct_candidates(idx: Index, rec: dict[str, Any]) -> list[Candidate]:
    """Candidates found by repository id or name, best first (before the guard)."""
    name, dev = rec["model"], str(rec.get("hugging_face_developer_id") or "")
    found: dict[str, tuple[tuple[int, ...], Candidate]] = {}

    def put(c: Candidate, tier: int) -> None:
        key = _order(c, tier, dev)
        if c.label not in found or key < found[c.label][0]:
            found[c.label] = (key, c)

    for repo in hf_repos(rec):
        for c in idx.by_repo.get(repo.lower(), []):
            put(c, 0)
    for k in name_keys(name):
        for c in idx.by_key.get(k, []):
            put(c, 1)
    for c in idx.by_stripped.get(stripped_key(name), []):
        put(c, 2)
    return [c for _, c in sorted(found.values(), key=lambda t: (t[0], t[1].label))]


def is_multimodal(rec: dict[str, Any]) -> bool:
    """True when Epoch's Domain names a non-text input (its count then includes those towers)."""
    return bool(set(rec.get("domain") or ()) & MULTIMODAL_DOMAINS)


def guard(arch_params: int, epoch_params: float, multimodal: bool = False) -> bool:
    """True when the computed count is within GUARD_TOLERANCE of Epoch's; for a multimodal model
    the (text-decoder) count may fall short down to MULTIMODAL_TEXT_SHARE of Epoch's figure."""
    ratio = arch_params / epoch_params
    low = MULTIMODAL_TEXT_SHARE if multimodal else 1 - GUARD_TOLERANCE
    return low <= ratio <= 1 + GUARD_TOLERANCE
