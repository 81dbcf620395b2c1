"""One entry point: the model a request names, from the catalog or from the user's own file."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tpscalc.catalog import NameNotFoundError, Resolution, resolve_model
from tpscalc.catalog.schema import Model
from tpscalc.catalog.slug import slugify
from tpscalc.sources.types import SourcedModel, SourceError

if TYPE_CHECKING:
    from pathlib import Path

    from tpscalc.catalog.hf_index import RepoMatch
    from tpscalc.sources.hub import Hub

CATALOG_SOURCES = {"architecture": "catalog", "weights": "catalog", "kv_cache": "catalog"}


def sourced_model(name: str | None = None, *, gguf: str | Path | None = None,
                  config: str | Path | None = None, config_index: str | Path | None = None,
                  hf: str | None = None, hub: Hub | None = None) -> SourcedModel:
    """The model of exactly one of: a catalog name, a GGUF file, a config.json, a Hub repo.

    hub: the Hub seam for `hf` (tests pass recorded answers); None means the real Hub.
    """
    given = [flag for flag, v in (("a model name", name), ("--gguf", gguf),
                                  ("--config", config), ("--hf", hf)) if v]
    if len(given) != 1:
        raise SourceError("give one of a model name, --gguf FILE, --config FILE or --hf REPO"
                          + (f", not {' and '.join(given)}" if given else ""), "bad_model")
    if config_index and not config:
        raise SourceError("--config-index goes with --config", "bad_model")
    if gguf:
        from tpscalc.sources.gguf_model import read_gguf

        return read_gguf(gguf)
    if config:
        from tpscalc.sources.hf_config import read_config

        return read_config(config, config_index)
    if hf:
        return _from_hub(str(hf), hub)
    found = resolve_name(str(name))
    return SourcedModel(found.model, dict(CATALOG_SOURCES), found.resolved_as)


def _from_hub(repo: str, hub: Hub | None) -> SourcedModel:
    """The model of Hub repository `repo`; when the Hub cannot be asked (offline, unreachable),
    the catalog's entry for that repository with a note saying so, else the one-line error."""
    from tpscalc.sources.hub import UNREACHABLE, read_hub

    try:
        return read_hub(repo, hub)
    except SourceError as exc:
        if exc.code not in UNREACHABLE:
            raise
        entry = catalog_entry_for_repo(repo)
        if entry is None:
            raise SourceError(f"{exc}; the catalog has no entry for it", exc.code) from None
        note = f"{exc}; the catalog's entry {entry.name} instead"
        return SourcedModel(entry, {**CATALOG_SOURCES, "note": note})


def catalog_entry_for_repo(repo: str) -> Model | None:
    """The catalog model published as Hub repository `repo` (its hf_repo, any case), else the
    one whose slug is the repository's name ("Qwen/Qwen3-8B" -> qwen3-8b); None if neither."""
    from tpscalc.catalog import store
    from tpscalc.catalog.slug import slugify

    wanted = repo.lower()
    models = store.models()
    by_repo = next((m for m in models if (m.hf_repo or "").lower() == wanted), None)
    if by_repo is not None:
        return by_repo
    name_slug = slugify(repo.rsplit("/", 1)[-1])
    return next((m for m in models if m.slug == name_slug), None)


def resolve_name(name: str) -> Resolution:
    """catalog.resolve_model, with the repositories of llmfit's list that no catalog model has
    the shape of sized from the list's own fields (sized_from_list)."""
    return resolve_model(name, build=sized_from_list)


def sized_from_list(found: RepoMatch, name: str) -> Resolution:
    """A repository of llmfit's list sized from its config fields (through the config reader)
    or its parameter count alone; "like" names the family's closest catalog model."""
    try:
        if found.config is not None:
            from tpscalc.sources.hf_config import model_from_config

            model = model_from_config(found.config, f"llmfit {found.repo}", label=found.repo).model
        else:
            model = Model.model_validate({"name": found.repo, "parameters": found.parameters,
                                          "slug": "hf-" + slugify(found.repo),
                                          "hf_repo": found.repo})
    except (SourceError, ValueError) as exc:
        raise NameNotFoundError(f"model {name!r}: llmfit's fields for {found.repo} do not "
                                f"form a model ({exc})") from None
    from tpscalc.catalog.hf_index import catalog_name

    facts: dict[str, Any] = {"kind": found.kind, "repo": found.repo,
                             "like": catalog_name(found.slug), "parameters": model.parameters}
    if found.context:
        facts["context"] = found.context
    if name.strip().lower() != found.repo.lower():
        facts["as"] = name.strip()
    return Resolution(model, facts)
