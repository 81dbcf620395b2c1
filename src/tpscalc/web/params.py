"""The page controls (context, quality floor, memory filter, search, ...) parsed from query strings."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from tpscalc.catalog.quants import UnknownQuantizationError, ladder_name
from tpscalc.estimate.engine import BACKENDS, DEFAULT_CONTEXT, EstimateInputError, check_context
from tpscalc.web.errors import WebError

SORTS = ("speed", "size", "date")
CONTEXT_CHOICES = (2048, 4096, 8192, 16384, 32768, 65536, 131072)  # offered in the form
_TRUE = {"1", "true", "on", "yes"}


@dataclass(frozen=True)
class Controls:
    """What the user chose on a model or card page; hashable (it keys the report cache)."""

    context: int = DEFAULT_CONTEXT
    min_quality: str | None = None
    min_memory_gib: float | None = None
    max_memory_gib: float | None = None
    search: str | None = None
    show_all: bool = False
    backend: str | None = None
    sort: str = "size"  # largest model first: what a card owner asks first

    def query(self) -> dict[str, str]:
        """The non-default controls as query parameters."""
        out: dict[str, str] = {}
        defaults = asdict(Controls())
        names = {"min_memory_gib": "min_memory", "max_memory_gib": "max_memory", "show_all": "all"}
        for key, value in asdict(self).items():
            if value != defaults[key] and value is not None:
                out[names.get(key, key)] = "1" if value is True else f"{value:g}" if isinstance(value, float) else str(value)
        return out


def parse_context(raw: str | None) -> int:
    """Context length in tokens from a query string, or WebError 400."""
    if raw is None or raw.strip() == "":
        return DEFAULT_CONTEXT
    text = raw.strip().replace("_", "").replace(",", "")
    try:
        value = int(text)
    except ValueError:
        raise WebError(400, "bad_context", f"context must be a whole number of tokens, not {raw!r}") from None
    try:
        return check_context(value)
    except EstimateInputError as exc:
        raise WebError(400, "bad_context", str(exc)) from None


def parse_memory(raw: str | None, name: str) -> float | None:
    """A memory filter in GiB (None when empty), or WebError 400."""
    if raw is None or raw.strip() == "":
        return None
    try:
        value = float(raw)
    except ValueError:
        raise WebError(400, "bad_memory", f"{name} must be a number of GiB, not {raw!r}") from None
    if not 0 <= value <= 100_000:
        raise WebError(400, "bad_memory", f"{name} must be between 0 and 100000 GiB")
    return value


def parse_quant(raw: str | None, code: str = "bad_quality") -> str | None:
    """A quantization name from the ladder (as `catalog.quants` spells it), or WebError 400."""
    if raw is None or raw.strip() == "":
        return None
    try:
        return ladder_name(raw)
    except UnknownQuantizationError as exc:
        raise WebError(400, code, str(exc), exc.suggestions) from None


def parse_choice(raw: str | None, choices: tuple[str, ...], what: str, default: str | None) -> str | None:
    """One of `choices` (case-insensitive) or `default` when empty, else WebError 400."""
    if raw is None or raw.strip() == "":
        return default
    if raw.strip().lower() not in choices:
        raise WebError(400, f"bad_{what}", f"unknown {what} {raw!r}; use one of {', '.join(choices)}")
    return raw.strip().lower()


def parse_controls(params: Any) -> Controls:
    """Controls from a request's query parameters (a Mapping[str, str])."""
    search = (params.get("search") or "").strip()[:200] or None
    return Controls(
        context=parse_context(params.get("context")),
        min_quality=parse_quant(params.get("min_quality")),
        min_memory_gib=parse_memory(params.get("min_memory"), "min_memory"),
        max_memory_gib=parse_memory(params.get("max_memory"), "max_memory"),
        search=search,
        show_all=(params.get("all") or "").strip().lower() in _TRUE,
        backend=parse_choice(params.get("backend"), BACKENDS, "backend", None),
        sort=parse_choice(params.get("sort"), SORTS, "sort", "size") or "size",
    )
