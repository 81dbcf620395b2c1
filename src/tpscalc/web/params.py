"""The page controls (context, quality floor, memory filter, search, ...) parsed from query strings."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from tpscalc.catalog.slug import compact
from tpscalc.web.errors import WebError

DEFAULT_CONTEXT = 4096  # tokens; same default as tpscalc.estimate.engine.DEFAULT_CONTEXT
MAX_CONTEXT = 10_000_000  # tokens; the engine refuses more
BACKENDS = ("cuda", "rocm", "vulkan", "metal", "sycl", "cpu")
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
    sort: str = "speed"

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
    if value <= 0 or value > MAX_CONTEXT:
        raise WebError(400, "bad_context", f"context must be between 1 and {MAX_CONTEXT:,} tokens, not {value:,}")
    return value


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


def quant_names() -> list[str]:
    """The quantization ladder's names, least compressed first."""
    try:
        from tpscalc.catalog.quants import quantizations
    except ModuleNotFoundError:
        from tpscalc.estimate.engine import _LADDER  # provisional engine, until quants.py lands

        return [q for q, _ in _LADDER]
    return [q.name for q in quantizations()]


def parse_quant(raw: str | None, code: str = "bad_quality") -> str | None:
    """A quantization name from the ladder (case-insensitive), or WebError 400 naming the valid ones."""
    if raw is None or raw.strip() == "":
        return None
    names = quant_names()
    by_key = {compact(n): n for n in names}
    found = by_key.get(compact(raw))
    if found is None:
        raise WebError(400, code, f"unknown quantization {raw!r}; use one of {', '.join(names)}")
    return found


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
        sort=parse_choice(params.get("sort"), SORTS, "sort", "speed") or "speed",
    )
