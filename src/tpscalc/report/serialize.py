"""JSON forms of the reports (what `--json`, the JSON API and the web charts read)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tpscalc.catalog.schema import Model
from tpscalc.i18n import translator
from tpscalc.report import provenance
from tpscalc.report.common import (
    READING_SPEED_TOKENS_PER_S,
    decode_json,
    highlight_json,
    memory_json,
    prefill_json,
    rig_row_json,
)
from tpscalc.report.quality import quality_json
from tpscalc.report.types import CardReport, ModelRow

if TYPE_CHECKING:  # the model page's types: a card page does not load them
    from tpscalc.report.model_types import ModelReport, Row


def model_json(model: Model) -> dict[str, Any]:
    """The model's record.

    Name, slug, organization, parameters, date, repo, architecture, record.
    """
    arch = (
        model.architecture.model_dump(mode="json", exclude={"hf_config"})
        if model.architecture
        else None
    )
    return {
        "name": model.name,
        "slug": model.slug,
        "organization": list(model.organization),
        "parameters": model.parameters,
        "parameters_total": model.parameters_total,
        "parameters_active": model.parameters_active,
        "parameters_vision": model.parameters_vision,
        "parameters_note": model.parameters_note,
        "publication_date": model.publication_date,
        "hf_repo": model.hf_repo,
        "in_epoch_data": model.in_epoch_data,
        "hf_url": model.hf_url,
        "native_format": model.native_format,
        "architecture": arch,
        "record": dict(model.record),
    }


def row_json(row: Row, model: Model | None = None,
             qualities: dict[str | None, Any] | None = None) -> dict[str, Any]:
    """One table row: the card, what it needs, the quantization, fit and speeds (and, given
    the model, the quantization's quality; `qualities`: those made so far, by quantization,
    which the rows of one model share)."""
    c, e = row.card, row.estimate
    out: dict[str, Any] = {
        "gpu": c.name,
        "slug": c.slug,
        "vendor": c.vendor,
        "memory_gib": c.memory_gib,
        "bandwidth_gb_s": c.bandwidth_gb_s,
        "release_date": c.release_date,
        "release_date_precision": c.release_date_precision,
        "needs_gib": e.memory.total_gib,
        "quant": e.quant,
        "fit": e.fit,
        "fits": e.fits,
        "backend": e.backend,
        "decode": decode_json(e),
        "prefill": prefill_json(e),
    } | rig_row_json(e)
    if model is not None:
        if qualities is None:
            out["quality"] = quality_json(model, e.quant)
        else:
            if e.quant not in qualities:
                qualities[e.quant] = quality_json(model, e.quant)
            out["quality"] = qualities[e.quant]
    if not e.fits:
        out["short_by_gib"] = e.short_by_gib
    return out


def _texts(items: Any) -> list[dict[str, str]]:
    return [{"title": t.title, "body": t.body} for t in items]


def model_report_json(report: ModelReport) -> dict[str, Any]:
    """The whole model report as JSON-ready data."""
    s, q, f = report.summary, report.summary.request.query, report.summary.request.filters
    fastest = s.fastest
    tr = translator(s.request.lang)
    qualities: dict[str | None, Any] = {}
    return {
        "model": model_json(s.model),
        "context": q.context,
        "min_quality": q.min_quality,
        "max_quality": q.max_quality,
        "kv_type": q.kv_type,
        "backend": q.backend,
        "runtime": q.runtime,
        "lang": s.request.lang,
        "filters": {
            "search": f.search,
            "min_memory_gib": f.min_memory_gib,
            "max_memory_gib": f.max_memory_gib,
            "show_all": f.show_all,
        },
        "cards_total": s.cards_total,
        "cards_fit": s.cards_fit,
        "rows_shown": len(report.rows),
        "smallest": highlight_json(s.smallest),
        "fastest": highlight_json(fastest),
        "median_tokens_per_s": s.median_tokens_per_s,
        "reading_speed_tokens_per_s": READING_SPEED_TOKENS_PER_S,
        "reading_speed_cards": s.reading_speed_cards,
        "quant_levels": list(s.quant_levels),
        "closest_miss": (
            dict(
                highlight_json(s.closest_miss) or {},
                short_by_gib=s.closest_miss.estimate.short_by_gib,
            )
            if s.closest_miss
            else None
        ),
        "prefer": f.prefer,
        "min_tps": f.min_tps,
        "rows": [row_json(r, s.model, qualities) for r in report.rows],
        "fastest_ten": [row_json(r) for r in s.fastest_ten],
        "smallest_cards": [row_json(r) for r in s.smallest_cards],
        "by_size": [
            {
                "size_gib": size,
                "best": row_json(best) if best else None,
                "closest_miss": row_json(miss) if miss else None,
            }
            for size, best, miss in s.by_size
        ],
        "memory_breakdown": (
            dict(
                memory_json(fastest.estimate.memory),
                gpu=fastest.card.name,
                quant=fastest.estimate.quant,
                context=q.context,
            )
            if fastest
            else None
        ),
        "kv_cache_at": [
            dict(memory_json(p.memory), context=p.context, quant=p.quant) for p in s.kv_points
        ],
        "context_curve": [
            {
                "role": p.role,
                "gpu": p.gpu,
                "context": p.context,
                "quant": p.quant,
                "needs_gib": p.needs_gib,
                "kv_cache_gib": p.kv_cache_gib,
                "tokens_per_s": p.tokens_per_s,
                "fits": p.fits,
            }
            for p in report.context_curve
        ],
        "depth_curve": [
            {
                "role": p.role,
                "gpu": p.gpu,
                "slug": p.slug,
                "depth": p.depth,
                "quant": p.quant,
                "decode_tokens_per_s": p.decode_tokens_per_s,
                "prefill_tokens_per_s": p.prefill_tokens_per_s,
                "fits": p.fits,
            }
            for p in report.depth_curve
        ],
        "serving_curve": [
            {"gpu": p.gpu, "parallel": p.parallel, "quant": p.quant,
             "aggregate_tokens_per_s": p.aggregate_tokens_per_s,
             "per_user_tokens_per_s": p.per_user_tokens_per_s}
            for p in report.serving_curve
        ],
        "record_sections": [
            {"title": sec.title, "fields": [{"name": f.name, "value": f.value} for f in sec.fields]}
            for sec in report.record
        ],
        "architecture_source": s.model.architecture.source if s.model.architecture else None,
        "memory_approximated": s.model.architecture is None,
        "approximation_reasons": list(provenance.approximation_reasons(s.model, tr.gettext)),
        "source_note": provenance.source_note(s.model, tr.gettext),
        "explanations": _texts(report.explanations),
        "guide": _texts(report.guide),
        "faq": [{"question": t.title, "answer": t.body} for t in report.faq],
        "notes": list(report.notes),
    }


def card_report_json(report: CardReport) -> dict[str, Any]:
    """The whole card report as JSON-ready data."""
    q, f = report.request.query, report.request.filters
    return {
        "card": report.card.model_dump(mode="json"),
        "context": q.context,
        "min_quality": q.min_quality,
        "max_quality": q.max_quality,
        "kv_type": q.kv_type,
        "backend": q.backend,
        "runtime": q.runtime,
        "lang": report.request.lang,
        "sort": f.sort,
        "filters": {"search": f.search, "show_all": f.show_all},
        "prefer": f.prefer,
        "min_tps": f.min_tps,
        **({"users_at": report.request.serving.users_at}
           if report.request.serving.users_at is not None else {}),
        "models_total": report.models_total,
        "models_fit": report.models_fit,
        "models_beyond_limit": report.models_beyond_limit,
        "reading_speed_models": report.reading_speed_models,
        "biggest": report.biggest and dict(row_model_json(report.biggest)),
        "fastest": report.fastest and dict(row_model_json(report.fastest)),
        "rows": [row_model_json(r) for r in report.rows],
        "faq": [{"question": t.title, "answer": t.body} for t in report.faq],
        "notes": list(report.notes),
    }


def row_model_json(row: ModelRow) -> dict[str, Any]:
    """One row of the card report: the model, what it needs, quantization, fit and speeds."""
    m, e = row.model, row.estimate
    out: dict[str, Any] = {
        "model": m.name,
        "slug": m.slug,
        "organization": list(m.organization),
        "parameters": m.parameters_total,
        "parameters_active": m.parameters_active,
        "publication_date": m.publication_date,
        "needs_gib": e.memory.total_gib,
        "memory_approximated": e.memory.approximated,
        "quant": e.quant,
        "fit": e.fit,
        "fits": e.fits,
        "decode": decode_json(e),
        "prefill": prefill_json(e),
        "max_context": row.max_context,  # set when evaluated at the model's shorter limit
        "beyond_model_limit": row.left_out,
        "quality": quality_json(m, e.quant),
    } | rig_row_json(e)
    if not e.fits:
        out["short_by_gib"] = e.short_by_gib
    if row.users is not None:  # asked with users_at: the most users at that speed each
        out["users"] = row.users
    return out


def report_json(report: ModelReport | CardReport) -> dict[str, Any]:
    """Either report as JSON-ready data (`--json`, the JSON API, the pages)."""
    if isinstance(report, CardReport):
        return card_report_json(report)
    return model_report_json(report)
