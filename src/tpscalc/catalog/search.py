"""Text filtering of catalog entries (names, and organizations or vendors)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from tpscalc.catalog.slug import compact

T = TypeVar("T")


def _haystack(entry: object) -> str:
    parts = [str(getattr(entry, "name", ""))]
    for attr in ("vendor", "organization"):
        value = getattr(entry, attr, None)
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, (tuple, list)):
            parts.extend(value)
    return compact(" ".join(parts))


def filter_by_text(entries: Sequence[T], text: str | None) -> list[T]:
    """Entries whose name (or vendor/organization) contains every word of `text`.

    Case and punctuation are ignored.
    """
    if not text or not text.strip():
        return list(entries)
    words = [compact(w) for w in text.split() if compact(w)]
    return [e for e in entries if all(w in _haystack(e) for w in words)]
