"""Hugging Face repository ids -> the catalog model each is, or the one whose architecture it
has (a fine-tune, a merge, a re-quantized copy), from hf_aliases.json.

tools/build_hf_aliases.py writes that file from llmfit's list of 15.9k repositories
(data/sources/llmfit_hf_models_v1.1.17.json) and the catalog's own `hf_repo`s. It is read on
the first name the catalog's names do not resolve, never at start-up.
"""
from __future__ import annotations

from functools import cache
from typing import Any, NamedTuple

from tpscalc.catalog import store
from tpscalc.catalog.names import repo_keys

INDEX_FILE = "hf_aliases.json"
# The repository is the catalog's model / has its architecture / is sized from llmfit's config
# fields (the family's closest catalog model beside it) / from llmfit's parameter count alone /
# the same, of an architecture family neither the catalog nor llama.cpp's converter holds.
KINDS = ("alias", "fine-tune", "architecture", "parameters", "unknown-family")
SIZED_KINDS = frozenset(KINDS[2:])  # not a catalog model: sources.load.sized_from_list
# llmfit's config fields an "architecture" row keeps, in order (a config.json's keys).
CONFIG_KEYS = ("model_type", "num_hidden_layers", "hidden_size", "num_attention_heads",
               "num_key_value_heads", "head_dim", "vocab_size", "intermediate_size",
               "max_position_embeddings", "num_experts", "num_experts_per_tok",
               "moe_intermediate_size", "shared_expert_intermediate_size")


class RepoMatch(NamedTuple):
    """One repository of the index: the catalog model (slug) it resolves to, and how ("" for
    a model sized from llmfit's fields of a family the catalog does not hold)."""

    repo: str
    slug: str
    kind: str  # one of KINDS
    parameters: float | None  # llmfit's count for the repository, when it read its weights
    context: int | None  # its config's context length, when llmfit read a config
    config: dict[str, Any] | None = None  # an "architecture" row's config.json fields


@cache
def _index() -> dict[str, RepoMatch]:
    """Lower-case repository id, and the name without its organization -> its match (a full id
    wins over another repository's bare name; between bare names, the file's order: the
    catalog's own repositories first, then the most downloaded)."""
    try:
        data = store.read_json(INDEX_FILE)
    except store.CatalogError:  # a checkout without the index: the catalog's names only
        return {}
    slugs, keys = data["models"], data["config_keys"]
    rows = [RepoMatch(repo, slugs[base] if base >= 0 else "", KINDS[kind], params, context,
                      {k: v for k, v in zip(keys, config[0]) if v is not None} if config else None)
            for repo, base, kind, params, context, *config in data["repos"]]
    by_key: dict[str, RepoMatch] = {}
    for row in rows:
        by_key.setdefault(row.repo.lower(), row)
    for row in rows:
        by_key.setdefault(row.repo.rsplit("/", 1)[-1].lower(), row)
    return by_key


def find_repo(text: str) -> RepoMatch | None:
    """The index's match for `text` (a repository id, with or without its organization,
    packaging or GGUF file name), or None."""
    index = _index()
    keys = repo_keys(text)
    for form in (*keys, *(k.rsplit("/", 1)[-1] for k in keys)):  # full ids first
        found = index.get(form)
        if found is not None:
            return found
    return None


def repo_count() -> int:
    """How many repository ids and bare names the index holds."""
    return len(_index())


def catalog_name(slug: str) -> str | None:
    """The name of the catalog model with `slug` ("" or absent: None)."""
    if not slug:
        return None
    names = store.model_names()
    entries = names if names is not None else store.models()
    return next((e.name for e in entries if e.slug == slug), None)
