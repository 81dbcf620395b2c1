"""What the readers return, and the one error they raise for bad input."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tpscalc.catalog.schema import Model
from tpscalc.estimate.query import EstimateInputError


class SourceError(EstimateInputError):
    """A file, config or repository that cannot be read as a model (one line; 4xx on the web)."""


@dataclass(frozen=True)
class SourcedModel:
    """A model read from the user's file, and where each fact came from.

    sources maps a fact ("weights", "kv_cache", "architecture", "parameters") to its origin,
    e.g. "file tiny.gguf (tensor sizes)" or "config config.json".
    """

    model: Model
    sources: dict[str, str] = field(default_factory=dict)
    # how a catalog name was resolved when not by the catalog's own name (catalog.Resolution)
    resolved_as: dict[str, Any] | None = None
