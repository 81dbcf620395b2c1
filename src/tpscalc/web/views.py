"""Turn a report dict into what the templates show: charts and small derived figures."""
from __future__ import annotations

from typing import Any

from markupsafe import Markup

from tpscalc.i18n import format_number, translator
from tpscalc.web import charts


def _gib(lang: str) -> charts.Fmt:
    return lambda v: format_number(v, lang, 1) + " GiB"


def _tokens(lang: str) -> charts.Fmt:
    return lambda v: format_number(v, lang, 0 if v >= 100 or v == 0 else 1)


def _context(lang: str) -> charts.Fmt:
    return lambda v: (
        format_number(v / 1024, lang, 0) + "k" if v >= 1024 else format_number(v, lang, 0)
    )


def breakdown_svg(breakdown: dict[str, Any] | None, lang: str) -> Markup:
    """Weights / KV cache / runtime as one hatched bar."""
    if not breakdown:
        return Markup("")
    _ = translator(lang).gettext
    parts = [
        (_("Weights"), breakdown.get("weights_gib") or 0.0),
        (_("KV cache"), breakdown.get("kv_cache_gib") or 0.0),
        (_("Runtime"), breakdown.get("runtime_gib") or 0.0),
    ]
    return charts.breakdown_chart(parts, title=_("Memory needed, by part"), fmt=_gib(lang))


def context_svgs(curve: Any, lang: str) -> tuple[Markup, Markup]:
    """(memory against context, speed against context) for the fastest and the typical card."""
    _ = translator(lang).gettext
    memory_chart = charts.line_chart(
        charts.curve_series(curve, "needs_gib"),
        title=_("Memory needed against context length"),
        x_label=_("Context length (tokens)"),
        y_label=_("Memory (GiB)"),
        x_fmt=_context(lang),
        y_fmt=_gib(lang),
    )
    speed_chart = charts.line_chart(
        charts.curve_series(curve, "tokens_per_s"),
        title=_("Speed against context length"),
        x_label=_("Context length (tokens)"),
        y_label=_("Tokens per second"),
        x_fmt=_context(lang),
        y_fmt=_tokens(lang),
    )
    return memory_chart, speed_chart


def _depth(lang: str) -> charts.Fmt:
    return lambda v: format_number(v / 1024, lang, 0) + "k" if v >= 1024 else format_number(v, lang)


def depth_svgs(curve: Any, lang: str) -> tuple[Markup, Markup]:
    """(decode speed, prompt processing speed) against depth, for up to three cards."""
    _ = translator(lang).gettext
    x_label = _("Tokens already in the conversation (depth)")
    decode = charts.line_chart(
        charts.curve_series(curve, "decode_tokens_per_s", "depth"),
        title=_("Generation speed against depth"), x_label=x_label,
        y_label=_("Tokens per second"), x_fmt=_depth(lang), y_fmt=_tokens(lang), even_x=True)
    prefill = charts.line_chart(
        charts.curve_series(curve, "prefill_tokens_per_s", "depth"),
        title=_("Prompt processing speed against depth"), x_label=x_label,
        y_label=_("Tokens per second"), x_fmt=_depth(lang), y_fmt=_tokens(lang), even_x=True)
    return decode, prefill


def speed_memory_svg(rows: list[dict[str, Any]], lang: str) -> Markup:
    """Every card that runs the model: its memory (GiB) against its speed (tok/s)."""
    _ = translator(lang).gettext
    points = [
        (r["memory_gib"], r["decode"]["tokens_per_s"], r.get("fit") == "comfortable", r["gpu"])
        for r in rows
        if r.get("decode") and r.get("memory_gib")
    ]
    return charts.scatter_chart(
        points,
        title=_("Speed against card memory"),
        x_label=_("Card memory (GiB)"),
        y_label=_("Tokens per second"),
        x_fmt=lambda v: format_number(v, lang, 0),
        y_fmt=_tokens(lang),
        legend=(_("Comfortable"), _("Tight")),
    )


def serving_svg(curve: Any, lang: str, target: float = 20.0) -> Markup:
    """Aggregate and per-user speed against users at once on the fastest card, with the
    per-user target marked (the report's serving_curve)."""
    if not curve:
        return Markup("")
    _ = translator(lang).gettext
    points = [(float(p["parallel"]), p["aggregate_tokens_per_s"], p["per_user_tokens_per_s"])
              for p in curve]
    return charts.serving_chart(
        points, target=target,
        title=_("{gpu}: speed with many users at once").format(gpu=curve[0]["gpu"]),
        x_label=_("Users at once (llama-server --parallel)"), y_label=_("Tokens per second"),
        names=(_("All users together"), _("Each user"),
               _("{speed} tok/s each").format(speed=format_number(target, lang))),
        x_fmt=lambda v: format_number(v, lang, 0), y_fmt=_tokens(lang))


def brief(row: Any) -> dict[str, Any]:
    """{gpu, slug, memory_gib, quant, tokens_per_s, needs_gib} from a row or a summary entry."""
    if not isinstance(row, dict):
        return {
            "gpu": str(row),
            "slug": None,
            "memory_gib": None,
            "quant": None,
            "tokens_per_s": None,
            "needs_gib": None,
        }
    found = row.get("decode")
    decode: dict[str, Any] = found if isinstance(found, dict) else {}
    return {
        "gpu": row.get("gpu") or row.get("name"),
        "slug": row.get("slug"),
        "memory_gib": row.get("memory_gib"),
        "quant": row.get("quant"),
        "tokens_per_s": decode.get("tokens_per_s", row.get("decode_tokens_per_s")),
        "needs_gib": row.get("needs_gib"),
    }


def text_of(item: Any) -> str:
    """A note as text (notes may be strings or {text: ...} objects)."""
    if isinstance(item, dict):
        return str(item.get("text") or item.get("answer") or item.get("message") or "")
    return str(item)


def model_context(report: dict[str, Any], lang: str) -> dict[str, Any]:
    """Template variables for the model page beyond the report itself."""
    memory_chart, speed_chart = context_svgs(report.get("context_curve"), lang)
    depth_decode, depth_prefill = depth_svgs(report.get("depth_curve"), lang)
    rows = report.get("rows") or []
    return {
        "chart_breakdown": breakdown_svg(report.get("memory_breakdown"), lang),
        "chart_context_memory": memory_chart,
        "chart_context_speed": speed_chart,
        "chart_depth_decode": depth_decode,
        "chart_depth_prefill": depth_prefill,
        "chart_serving": serving_svg(report.get("serving_curve"), lang),
        "chart_speed_memory": speed_memory_svg([r for r in rows if r.get("fit") != "no"], lang),
        "fastest_ten": [brief(r) for r in report.get("fastest_ten") or []],
        "smallest_cards": [brief(r) for r in report.get("smallest_cards") or []],
        "smallest": brief(report["smallest"]) if report.get("smallest") else None,
        "fastest": brief(report["fastest"]) if report.get("fastest") else None,
        "notes": [text_of(n) for n in report.get("notes") or []],
    }
