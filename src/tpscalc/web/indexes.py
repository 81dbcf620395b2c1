"""The model and card indexes: filtering and the row shape both the HTML and the API show."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tpscalc.catalog import store
from tpscalc.catalog.schema import Card, Model
from tpscalc.catalog.search import filter_by_text
from tpscalc.catalog.slug import compact
from tpscalc.web.errors import WebError
from tpscalc.web.params import parse_memory


@dataclass(frozen=True)
class ModelFilters:
    """Index filters for models: text, organization, size in billions of parameters, year range."""

    search: str | None = None
    organization: str | None = None
    min_params_b: float | None = None
    max_params_b: float | None = None
    since: int | None = None
    until: int | None = None


@dataclass(frozen=True)
class CardFilters:
    """Index filters for cards: text, vendor, memory range in GiB."""

    search: str | None = None
    vendor: str | None = None
    min_memory_gib: float | None = None
    max_memory_gib: float | None = None


def _text(raw: str | None) -> str | None:
    return (raw or "").strip()[:200] or None


def _year(raw: str | None, name: str) -> int | None:
    if raw is None or raw.strip() == "":
        return None
    if not raw.strip().isdigit() or not 1900 <= int(raw) <= 2100:
        raise WebError(400, "bad_year", f"{name} must be a year such as 2024, not {raw!r}")
    return int(raw)


def parse_model_filters(params: Any) -> ModelFilters:
    """ModelFilters from query parameters."""
    return ModelFilters(_text(params.get("search")), _text(params.get("organization")),
                        parse_memory(params.get("min_params"), "min_params"),
                        parse_memory(params.get("max_params"), "max_params"),
                        _year(params.get("since"), "since"), _year(params.get("until"), "until"))


def parse_card_filters(params: Any) -> CardFilters:
    """CardFilters from query parameters."""
    return CardFilters(_text(params.get("search")), _text(params.get("vendor")),
                       parse_memory(params.get("min_memory"), "min_memory"),
                       parse_memory(params.get("max_memory"), "max_memory"))


def model_row(m: Model) -> dict[str, Any]:
    """One model as the index lists it (parameters as counts, not billions)."""
    arch = m.architecture
    return {"name": m.name, "slug": m.slug, "organization": list(m.organization),
            "parameters": m.parameters_total, "parameters_active": m.parameters_active,
            "publication_date": m.publication_date, "hf_repo": m.hf_repo,
            "moe": m.is_moe,
            "architecture_source": arch.source if arch else None}


def card_row(c: Card) -> dict[str, Any]:
    """One card as the index lists it (memory GiB, bandwidth GB/s)."""
    return {"name": c.name, "slug": c.slug, "vendor": c.vendor, "memory_gib": c.memory_gib,
            "bandwidth_gb_s": c.bandwidth_gb_s, "release_date": c.release_date,
            "release_date_precision": c.release_date_precision, "kind": c.kind,
            "tflops_fp16_dense": c.tflops_fp16_dense}


def _in_range(value: float, low: float | None, high: float | None) -> bool:
    return (low is None or value >= low) and (high is None or value <= high)


def list_models(f: ModelFilters) -> list[dict[str, Any]]:
    """Models matching `f`, newest first."""
    rows = filter_by_text(store.models(), f.search)
    if f.organization:
        key = compact(f.organization)
        rows = [m for m in rows if any(key in compact(o) for o in m.organization)]
    rows = [m for m in rows if _in_range(m.parameters_total / 1e9, f.min_params_b, f.max_params_b)]
    if f.since or f.until:
        rows = [m for m in rows if m.publication_date
                and _in_range(int(m.publication_date[:4]), f.since, f.until)]
    rows.sort(key=lambda m: (m.publication_date or "", m.name), reverse=True)
    return [model_row(m) for m in rows]


def list_cards(f: CardFilters) -> list[dict[str, Any]]:
    """Cards matching `f`, most memory bandwidth first."""
    rows = filter_by_text(store.cards(), f.search)
    if f.vendor:
        rows = [c for c in rows if compact(c.vendor) == compact(f.vendor)]
    rows = [c for c in rows if _in_range(c.memory_gib, f.min_memory_gib, f.max_memory_gib)]
    rows.sort(key=lambda c: (-c.bandwidth_gb_s, c.name))
    return [card_row(c) for c in rows]


def organizations() -> list[str]:
    """Every organization named in the catalog, sorted."""
    return sorted({o for m in store.models() for o in m.organization}, key=str.lower)


def vendors() -> list[str]:
    """Every card vendor, sorted."""
    return sorted({c.vendor for c in store.cards()})
