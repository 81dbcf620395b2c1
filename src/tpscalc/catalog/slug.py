"""Slugs and the normalisation used to match names the way people type them."""
from __future__ import annotations

import re

_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_TOKEN = re.compile(r"[a-z]+|[0-9]+(?:\.[0-9]+)?")


def slugify(name: str) -> str:
    """Lowercase `name`; "+" becomes the word "plus"; every run of other characters becomes
    one "-".

    "StarCoder 2 15B" → "starcoder-2-15b"; "Command R+" → "command-r-plus" (not "command-r",
    which is Command R's).
    """
    return _NON_ALNUM.sub("-", name.lower().replace("+", " plus ")).strip("-")


def compact(name: str) -> str:
    """Lowercase letters and digits only ("RTX 4090" → "rtx4090")."""
    return _NON_ALNUM.sub("", name.lower())


def tokens(name: str) -> tuple[str, ...]:
    """Letter runs and number runs, split at letter/digit boundaries.

    "rtx4090" → ("rtx", "4090").
    """
    return tuple(_TOKEN.findall(name.lower()))


def unique_slugs(names: list[str]) -> list[str]:
    """Slugs for `names` in order, with "-2", "-3", ... appended where a slug repeats."""
    taken: set[str] = set()
    out: list[str] = []
    for name in names:
        base = slugify(name) or "unnamed"
        slug, n = base, 1
        while slug in taken:
            n += 1
            slug = f"{base}-{n}"
        taken.add(slug)
        out.append(slug)
    return out
