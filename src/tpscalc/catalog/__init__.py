"""The catalog: cards, models and quantizations, loaded lazily from the committed data files."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from tpscalc.catalog import store
from tpscalc.catalog.lookup import NameNotFoundError, resolve, resolve_choice
from tpscalc.catalog.schema import Architecture, Card, Cpu, Model

if TYPE_CHECKING:
    from tpscalc.catalog import hf_index


def get_card(name: str) -> Card:
    """The card `name` designates ("4090", "RTX 4090", "geforce-rtx-4090", "M2 Max 38-core")."""
    return resolve(name, store.cards(), "card")


class CardMatch(NamedTuple):
    """The card a name designates, and the chip's other variants when the name fits several
    ("M4 Max": answered for the 32-core GPU, the 40-core one named beside it)."""

    card: Card
    alternatives: tuple[Card, ...] = ()

    def note(self, typed: str) -> str | None:
        """One line saying which variant `typed` was taken as and how to pick another."""
        if not self.alternatives:
            return None
        others = ", ".join(f'"{c.name}"' for c in self.alternatives)
        return (f"{typed.strip()!r} names {len(self.alternatives) + 1} variants of one chip: "
                f"answered for its base variant, {self.card.name}; for another, name it: "
                f"{others}")


def match_card(name: str) -> CardMatch:
    """The card `name` designates, as get_card; where get_card finds it ambiguous only because
    it fits one chip's GPU configurations ("M4 Max"), the base one with the others named
    (CardMatch). For answers that say so; the calibration and benchmarks keep get_card."""
    card, others = resolve_choice(name, store.cards(), "card")
    return CardMatch(card, others)


class Resolution(NamedTuple):
    """The model a name designates, and how it was found when not by the catalog's own name:
    {"kind": "alias" | "fine-tune", "base": catalog name, "repo": a Hugging Face repository,
    "parameters", "context": the repository's own where they differ from the base's}."""

    model: Model
    resolved_as: dict[str, Any] | None = None


def get_model(name: str) -> Model:
    """The model `name` designates ("starcoder2-15b", "StarCoder 2 15B",
    "meta-llama/Llama-3.3-70B-Instruct", "Qwen3-8B-Q4_K_M.gguf", "llama3.1:8b", a fine-tune's
    repository: resolve_model)."""
    return resolve_model(name).model


def resolve_model(name: str, build: Callable[[hf_index.RepoMatch, str], Resolution] | None = None
                  ) -> Resolution:
    """The model `name` designates: a catalog name first; else a Hugging Face repository id of
    the index (catalog/hf_index.py: the catalog's own, or a fine-tune with its base's
    architecture), with or without its organization, packaging or GGUF file name; else the
    name rewritten as the catalog writes names (catalog/names.py: an ollama tag, "Meta-",
    "-Instruct", a release date). Unknown or ambiguous: the catalog lookup's own error.

    build: makes the model of an index row that is no catalog model (sized from llmfit's config
    fields or parameter count: sources.load.resolve_name passes it); without it such rows are
    not found."""
    names = store.model_names()  # before every model is loaded: the names, then that one
    entries: Sequence[store.ModelName | Model] = names if names is not None else store.models()

    def model_of(entry: store.ModelName | Model) -> Model:
        return store.model_at(entry.position) if isinstance(entry, store.ModelName) else entry

    typed_name = name.strip()  # a repository id has a "/" and no space, a file its extension
    repo_like = ("/" in typed_name and " " not in typed_name) or typed_name.lower().endswith(
        ".gguf")
    if not repo_like:  # a repository id or file name is never a catalog name: the index first
        try:
            return Resolution(model_of(resolve(name, entries, "model", suggest=False)))
        except NameNotFoundError:
            pass
    from tpscalc.catalog import hf_index  # a name the catalog lacks only
    from tpscalc.catalog import names as typed

    found = hf_index.find_repo(name)
    if found is not None and found.kind in hf_index.SIZED_KINDS:
        if build is not None:
            return build(found, name)
    elif found is not None:
        entry = next((e for e in entries if e.slug == found.slug), None)
        if entry is not None:
            return _from_repo(model_of(entry), found, name)
    for variant in typed.name_variants(name):
        if variant == name.strip() and not repo_like:
            continue
        try:
            model = model_of(resolve(variant, entries, "model", suggest=False))
        except NameNotFoundError:
            continue
        return Resolution(model, {"kind": "alias", "base": model.name, "as": variant})
    # a catalog name with a "/" in it, else the lookup's own error with the closest names
    return Resolution(model_of(resolve(name, entries, "model")))


def _from_repo(model: Model, found: hf_index.RepoMatch, name: str) -> Resolution:
    """`model` as repository `found` (looked up as `name`): its own, or a fine-tune with the
    repository's context length and parameter count (llmfit's) where they differ."""
    facts: dict[str, Any] = {"kind": found.kind, "base": model.name, "repo": found.repo}
    if name.strip().lower() != found.repo.lower():  # another copy, a file name, no organization
        facts["as"] = name.strip()
    arch = model.architecture
    update: dict[str, Any] = {}
    if found.parameters and abs(found.parameters / model.parameters - 1) > 0.01:
        facts["parameters"] = update["parameters"] = found.parameters
    if (found.context and arch is not None and arch.max_context
            and found.context != arch.max_context):
        facts["context"] = found.context
        update["architecture"] = arch.model_copy(update={"max_context": found.context})
    return Resolution(model.model_copy(update=update) if update else model, facts)


def get_cpu(name: str) -> Cpu:
    """The CPU `name` designates ("7950X", "Ryzen 9 7950X", "M3 Max 16-core CPU")."""
    return resolve(name, store.cpus(), "CPU")


def cpu_of_card(card: Card) -> Cpu | None:
    """The CPU of a unified-memory chip of the catalog (Apple, Strix Halo, GB10); None for a
    card with its own memory or a chip whose CPU the table lacks."""
    if not card.unified_memory:  # a discrete card: no need to load the CPU table
        return None
    return next((c for c in store.cpus() if card.name in c.cards), None)


__all__ = ["Architecture", "Card", "CardMatch", "Cpu", "Model", "NameNotFoundError",
           "Resolution", "cpu_of_card", "get_card", "get_cpu", "get_model", "match_card",
           "resolve_model"]
