"""Resolve names the way people type them ("4090", "rtx4090", "StarCoder 2 15B") to one entry."""
from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from tpscalc.catalog.slug import compact, slugify, tokens

# Words that brand a card but that people leave out when they type its name.
BRAND_WORDS = frozenset({"nvidia", "geforce", "amd", "radeon", "intel", "apple", "ati"})


class Named(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def slug(self) -> str: ...


T = TypeVar("T", bound=Named)


class NameNotFoundError(ValueError):
    """A name matched nothing or more than one entry; the message lists the closest names."""

    def __init__(self, message: str, suggestions: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.suggestions = tuple(suggestions)


@dataclass(frozen=True)
class _Key:
    compact: str
    core: str  # compact name without brand words
    tokens: frozenset[str]


def _key(name: str) -> _Key:
    toks = tokens(name)
    core = "".join(t for t in toks if t not in BRAND_WORDS)
    return _Key(compact(name), core.replace(".", ""), frozenset(toks))


def closest(query: str, entries: Sequence[Named], n: int = 5) -> list[str]:
    """The `n` names most like `query`."""
    by_compact = {compact(e.name): e.name for e in entries}
    hits = difflib.get_close_matches(compact(query), list(by_compact), n=n, cutoff=0.4)
    return [by_compact[h] for h in hits]


def resolve(query: str, entries: Sequence[T], what: str = "entry") -> T:
    """The one entry `query` names: exact slug or name, then compact form, then fewest extra words."""
    q = query.strip()
    if not q:
        raise NameNotFoundError(f"empty {what} name")
    q_slug, q_key = slugify(q), _key(q)
    for e in entries:
        if e.slug == q_slug or e.name.lower() == q.lower():
            return e
    for field in ("compact", "core"):
        hits = [e for e in entries if getattr(_key(e.name), field) == getattr(q_key, field)]
        if len(hits) == 1:
            return hits[0]
    if not q_key.tokens:
        raise NameNotFoundError(f"unknown {what} {query!r}", closest(q, entries))
    scored = []
    for e in entries:
        k = _key(e.name)
        if q_key.tokens <= k.tokens:
            extra = len(k.tokens - q_key.tokens - BRAND_WORDS)
            scored.append((extra, e))
    if not scored:
        sugg = closest(q, entries)
        hint = f"; closest: {', '.join(sugg)}" if sugg else ""
        raise NameNotFoundError(f"unknown {what} {query!r}{hint}", sugg)
    scored.sort(key=lambda t: t[0])
    best = [e for extra, e in scored if extra == scored[0][0]]
    if len(best) == 1:
        return best[0]
    names = [e.name for e in best[:6]]
    raise NameNotFoundError(f"{what} {query!r} is ambiguous: {', '.join(names)}", names)
