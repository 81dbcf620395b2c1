"""Resolve names the way people type them ("4090", "rtx4090", "StarCoder 2 15B") to one entry."""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple, Protocol, TypeVar

from tpscalc.catalog import store
from tpscalc.catalog.slug import compact, slugify, tokens

# Words that brand a card but that people leave out when they type its name.
BRAND_WORDS = frozenset({"nvidia", "geforce", "amd", "radeon", "intel", "apple", "ati"})
# Words that may be missing from a query without counting against a candidate ("4090" for
# "GeForce RTX 4090", "M2 Max 38-core" for "Apple M2 Max (38-core GPU)").
OPTIONAL_WORDS = BRAND_WORDS | {"rtx", "gtx", "rx", "instinct", "tesla", "quadro", "gpu"}
# Parenthesised or bracketed notes and memory sizes ("(DGX Spark)", "[host ...]", "32GB").
_NOTES = re.compile(r"\([^)]*\)|\[[^]]*\]|\b\d+\s*GB\b", re.IGNORECASE)


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


class NameKey(NamedTuple):
    compact: str
    core: str  # compact name without brand words
    tokens: frozenset[str]


def name_key(name: str) -> NameKey:
    """What a lookup compares of `name`: its compact form, without brand words, its words."""
    toks = tokens(name)
    core = "".join(t for t in toks if t not in BRAND_WORDS)
    return NameKey(compact(name), core.replace(".", ""), frozenset(toks))


# The catalog's card names' keys come precomputed (zz_catalog.pickle, by name_key): a card
# lookup compares the query with all 850 (~2.5 ms to compute at every start).
_KEYS: dict[str, NameKey] = {}


def _key(name: str) -> NameKey:
    # a lookup compares the query with every entry's key, up to three times
    key = _KEYS.get(name)
    if key is None:
        if not _KEYS:
            _KEYS.update({n: NameKey(c, core, frozenset(words))
                          for n, (c, core, words) in store.card_name_keys().items()})
            key = _KEYS.get(name)
        if key is None:
            key = _KEYS[name] = name_key(name)
    return key


def closest(query: str, entries: Sequence[Named], n: int = 5) -> list[str]:
    """The `n` names most like `query`."""
    by_compact = {compact(e.name): e.name for e in entries}
    from difflib import get_close_matches  # on an unknown name only

    hits = get_close_matches(compact(query), list(by_compact), n=n, cutoff=0.4)
    return [by_compact[h] for h in hits]


def _ranked(q: str, entries: Sequence[T]) -> tuple[T | None, list[tuple[int, T]]]:
    """The entry `q` names for sure, else every entry holding all its words.

    The candidates come fewest extra words first.
    """
    q_slug, q_key, q_lower = slugify(q), _key(q), q.lower()
    for e in entries:  # the exact name first: a name is what the user typed, a slug a guess
        if e.name.lower() == q_lower:
            return e, []
    for e in entries:
        if e.slug == q_slug:
            return e, []
    for field in ("compact", "core"):
        hits = [e for e in entries if getattr(_key(e.name), field) == getattr(q_key, field)]
        if len(hits) == 1:
            return hits[0], []
    if not q_key.tokens:
        return None, []
    scored = [(len(k.tokens - q_key.tokens - OPTIONAL_WORDS), i, e)
              for i, e in enumerate(entries) if q_key.tokens <= (k := _key(e.name)).tokens]
    scored.sort(key=lambda t: (t[0], t[1]))
    return None, [(extra, e) for extra, _, e in scored]


def _pick(scored: list[tuple[int, T]], strict: bool) -> T | None:
    """The one candidate to take: the only one, or the one with fewest extra words.

    With `strict`, none unless it is the only one.
    """
    if len(scored) == 1:
        return scored[0][1]
    if len(scored) > 1 and scored[0][0] < scored[1][0] and (scored[0][0] == 0 or not strict):
        return scored[0][1]
    return None


def resolve(
    query: str, entries: Sequence[T], what: str = "entry", *, strict: bool | None = None
) -> T:
    """The one entry `query` names: exact slug or name, then compact form, then fewest extra words.

    `strict` (default: on for cards) takes a candidate with extra words only when it is the only
    one, so "H100" lists the H100 variants instead of picking "H100 CNX". A query that finds
    nothing is retried without its notes and memory size
    ("NVIDIA GB10 (DGX Spark)" -> "NVIDIA GB10").
    """
    q = query.strip()
    if not q:
        raise NameNotFoundError(f"empty {what} name")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in q):
        raise NameNotFoundError(f"a {what} name must not contain control characters")
    strict = (what == "card") if strict is None else strict
    hit, scored = _ranked(q, entries)
    bare = " ".join(_NOTES.sub(" ", q).split())
    if hit is None and not scored and bare and bare != q:
        hit, scored = _ranked(bare, entries)
    if hit is None:
        hit = _pick(scored, strict)
    if hit is not None:
        return hit
    if not scored:
        sugg = closest(q, entries)
        hint = f"; closest: {', '.join(sugg)}" if sugg else ""
        raise NameNotFoundError(f"unknown {what} {query!r}{hint}", sugg)
    names = [e.name for _, e in scored[:6]]
    raise NameNotFoundError(f"{what} {query!r} is ambiguous: {', '.join(names)}", names)
