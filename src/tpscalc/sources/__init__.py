"""Models from the user's own files: a GGUF header, a Hugging Face config.json, a Hub repository.

Each reader returns a `SourcedModel`: a catalog `Model` (with the file's exact weight bytes when
a GGUF gives them) and where each fact came from. Bad input raises `SourceError`.
"""
from __future__ import annotations

from tpscalc.sources.types import SourcedModel, SourceError

__all__ = ["SourceError", "SourcedModel"]
