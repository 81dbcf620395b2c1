"""One entry point: the model a request names, from the catalog or from the user's own file."""
from __future__ import annotations

from typing import TYPE_CHECKING

from tpscalc.catalog import resolve_model
from tpscalc.sources.types import SourcedModel, SourceError

if TYPE_CHECKING:
    from pathlib import Path

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
        from tpscalc.sources.hub import read_hub

        return read_hub(str(hf), hub)
    found = resolve_model(str(name))
    return SourcedModel(found.model, dict(CATALOG_SOURCES), found.resolved_as)
