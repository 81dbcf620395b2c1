"""HTML routes: indexes, model and card pages, credits, and the language redirect."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from tpscalc.catalog.quants import ladder_names
from tpscalc.estimate.query import (
    ABOVE_LADDER,
    BACKENDS,
    DEFAULT_MIN_QUALITY,
    KV_TYPES,
    model_context_limit,
)
from tpscalc.estimate.runtimes import RUNTIMES
from tpscalc.i18n import DEFAULT_LANGUAGE, LANGUAGES
from tpscalc.report.model_report import CURVE_CONTEXTS
from tpscalc.report.request import (
    CARD_REPORT_PARAMS,
    MODEL_REPORT_PARAMS,
    PAGE_PARAMS,
    PREFERENCES,
    REPORT_RIG_PARAMS,
    ROWS_PER_PAGE,
    SITE_GPU_COUNTS,
    SITE_RAM_GIB,
    SITE_RIG_PARAMS,
    SORTS,
    ReportRequest,
    to_query,
)
from tpscalc.web import indexes, reports
from tpscalc.web.fit_page import fit_url_maker
from tpscalc.web.page_cache import cached_html
from tpscalc.web.params import check_lang, query_text, refuse_other_fields, request_from
from tpscalc.web.render import render_page
from tpscalc.web.static_data import dictionary_path, rows_path
from tpscalc.web.views import brief, model_context

router = APIRouter(include_in_schema=False)


def preferred_language(header: str | None) -> str:
    """The first language of an Accept-Language header we speak (by q-value), else English."""
    choices = []
    for i, part in enumerate((header or "").split(",")):
        code, _, params = part.strip().partition(";")
        q = 1.0
        if params.strip().startswith("q="):
            try:
                q = float(params.strip()[2:])
            except ValueError:
                q = 0.0
        choices.append((-q, i, code.strip().lower().split("-")[0]))
    for _q, _i, code in sorted(choices):
        if code in LANGUAGES:
            return code
    return DEFAULT_LANGUAGE


@router.get("/")
def home(request: Request) -> Response:
    """Redirect to the model index in the visitor's language."""
    lang = preferred_language(request.headers.get("accept-language"))
    return RedirectResponse(f"/{lang}/models", status_code=307, headers={"Vary": "Accept-Language"})


@router.get("/{lang}")
def language_home(lang: str) -> Response:
    """/{lang} → /{lang}/models."""
    return RedirectResponse(f"/{check_lang(lang)}/models", status_code=307)


def form_options(request: ReportRequest, max_context: int | None = None) -> dict[str, object]:
    """What the control form offers (and which the user chose); on a model page only the
    contexts up to the model's limit, the limit itself included."""
    contexts = sorted(set(CURVE_CONTEXTS) | {request.query.context})
    if max_context is not None:
        contexts = sorted({c for c in contexts if c < max_context} | {max_context})
    return {
        "query": request.query,
        "filters": request.filters,
        "contexts": contexts,
        "quants": ladder_names(),
        "default_min_quality": DEFAULT_MIN_QUALITY,
        "above_ladder": list(ABOVE_LADDER),
        "backends": BACKENDS,
        "runtimes": [(name, rt.label) for name, rt in RUNTIMES.items()],
        "runtime_label": RUNTIMES[request.query.runtime].label,
        "kv_types": KV_TYPES,
        "sorts": SORTS,
        "preferences": PREFERENCES,
        "rig": request.rig,
        "serving": request.serving,
        "users_at_speeds": SITE_USERS_AT_TOK_S,
        "gpu_counts": sorted(set(SITE_GPU_COUNTS) | {request.rig.gpus or 1}),
        "ram_sizes": sorted(set(SITE_RAM_GIB) | ({request.rig.ram_gib} if request.rig.ram_gib
                                                  else set())),
        # rig fields the page takes without a control of its own: kept when the form is sent
        "hidden_fields": [(k, v) for k, v in to_query(request).items()
                          if k in REPORT_RIG_PARAMS and k not in SITE_RIG_PARAMS],
    }


SITE_USERS_AT_TOK_S = (10, 20, 30, 50)  # the card page's "users at" control (tok/s each)

# Rows a static page holds in its HTML; its script then shows pages of ROWS_PER_PAGE from the
# report's data file. Fewer than a served page: 5,000+ pages, and the 300 MB the export may take.
STATIC_ROWS = 20


def paging(rows: list[Any], request: ReportRequest, path: str, export: bool,
           data_path: str = "") -> dict[str, Any]:
    """The table rows this page shows and the links to the pages around it.

    A static export shows the first page's rows and names the file with every row
    (`data_path`, see static_data.py) that the page's script pages and searches; a page number
    past the last shows the last page."""
    if export:
        return {"page_rows": rows[:STATIC_ROWS], "page": 1, "pages": 1, "page_links": {},
                "static_table": {"rows": data_path, "dictionary": dictionary_path(request.lang),
                                 "total": len(rows), "per_page": ROWS_PER_PAGE,
                                 "shown": STATIC_ROWS}}
    pages = max(1, -(-len(rows) // ROWS_PER_PAGE))
    page = min(request.filters.page, pages)
    start = (page - 1) * ROWS_PER_PAGE

    def link(number: int) -> str:
        return path + query_text(to_query(request, page=number))

    links = {"first": link(1) if page > 1 else None,
             "previous": link(page - 1) if page > 1 else None,
             "next": link(page + 1) if page < pages else None,
             "last": link(pages) if page < pages else None}
    return {"page_rows": rows[start:start + ROWS_PER_PAGE], "page": page, "pages": pages,
            "page_links": links, "static_table": None}


def model_page(
    slug: str, request: ReportRequest, path: str, *, export: bool = False, partial: bool = False
) -> str:
    """The model page (or only its results block) as HTML, in the request's language."""
    model = reports.find_model(slug)
    request = reports.for_model(model, request)
    report = reports.model_report(slug, request)
    template = "_partials/model_results.html" if partial else "model.html"
    return render_page(
        request.lang,
        template,
        path,
        export=export,
        report=report,
        **paging(report.get("rows") or [], request, path, export, rows_path("model", slug)),
        **{**model_context(report, request.lang),
           **rig_context(report.get("rows") or [], request)},
        **form_options(request, model_context_limit(model)),
        fit_url=fit_url_maker(request.lang, request, export, model=model.slug),
    )


def rig_context(rows: list[dict[str, Any]], request: ReportRequest) -> dict[str, Any]:
    """What the model page says about the rig asked for: each card named as the rig it stands
    for ("2x GeForce RTX 3090 + 64 GB RAM"), and how many hold the model in VRAM apart from
    those that run it only with part of it in system RAM (issue 27: "833 cards can run it"
    counted offload as fitting)."""
    from tpscalc.i18n import format_number

    gpus, ram = request.rig.gpus or 1, request.rig.ram_gib
    prefix = f"{gpus}x " if gpus > 1 else ""
    suffix = f" + {format_number(ram, request.lang)} GB RAM" if ram else ""

    def rig_name(card: str | None) -> str:
        return f"{prefix}{card or ''}{suffix}"

    in_vram = [r for r in rows if r.get("fit") in ("comfortable", "tight")]
    out: dict[str, Any] = {
        "rig_given": bool(prefix or suffix), "rig_name": rig_name,
        "rigs_in_vram": len(in_vram),
        "rigs_offload": sum(r.get("fit") in ("offload", "cpu") for r in rows)}
    if out["rig_given"] and in_vram:  # the smallest that holds it in VRAM, not in RAM
        out["smallest"] = brief(min(in_vram, key=lambda r: (r.get("memory_gib") or 0,
                                                            -(r.get("decode") or {}).get(
                                                                "tokens_per_s", 0))))
    return out


def card_page(
    slug: str, request: ReportRequest, path: str, *, export: bool = False, partial: bool = False
) -> str:
    """The card page (or only its results block) as HTML, in the request's language."""
    report = reports.card_report(slug, request)
    template = "_partials/card_results.html" if partial else "card.html"
    refused = RUNTIMES[request.query.runtime].refusal(reports.find_card(slug)) is not None
    return render_page(
        request.lang, template, path, export=export, report=report, runtime_refused=refused,
        **paging(report.get("rows") or [], request, path, export, rows_path("card", slug)),
        **form_options(request),
        fit_url=fit_url_maker(request.lang, request, export, card=report["card"]["slug"]),
    )


@router.get("/{lang}/models/{slug}", response_class=HTMLResponse)
def model_route(lang: str, slug: str, request: Request) -> Response:
    """One model against every card."""
    return _detail_route(
        lang, slug, request, "models", reports.find_model, model_page, MODEL_REPORT_PARAMS
    )


@router.get("/{lang}/cards/{slug}", response_class=HTMLResponse)
def card_route(lang: str, slug: str, request: Request) -> Response:
    """One card against every model."""
    return _detail_route(
        lang, slug, request, "cards", reports.find_card, card_page, CARD_REPORT_PARAMS
    )


def _detail_route(
    lang: str,
    slug: str,
    request: Request,
    kind: str,
    find: Callable[[str], Any],
    page: Callable[..., str],
    allowed: tuple[str, ...],
) -> Response:
    """A model or card page; a redirect (308) to the canonical slug when `slug` is another name."""
    check_lang(lang)
    canonical = find(slug).slug
    if canonical != slug:  # the query string stays: the same question, the canonical address
        query = request.url.query
        target = f"/{lang}/{kind}/{canonical}" + (f"?{query}" if query else "")
        return RedirectResponse(target, status_code=308)
    # The fields the JSON API's report takes, with the same meaning; a request field the page
    # does not take (depth, tensor_split, ...) is refused, never ignored.
    names = tuple(n for n in allowed if n != "lang") + REPORT_RIG_PARAMS + PAGE_PARAMS
    refuse_other_fields(request.query_params, (*names, "lang"))
    asked = request_from(request.query_params, names, lang)
    partial = request.query_params.get("partial") == "1"
    key = (kind, slug, asked, partial)
    return cached_html(request, key, lambda: page(slug, asked, request.url.path, partial=partial))


def models_index(lang: str, params: object, path: str, *, export: bool = False) -> str:
    """The model index page."""
    filters = indexes.parse_model_filters(params)
    return render_page(
        lang,
        "models_index.html",
        path,
        export=export,
        filters=filters,
        rows=indexes.list_models(filters),
        organizations=indexes.organizations(),
    )


def cards_index(lang: str, params: object, path: str, *, export: bool = False) -> str:
    """The card index page."""
    filters = indexes.parse_card_filters(params)
    return render_page(
        lang,
        "cards_index.html",
        path,
        export=export,
        filters=filters,
        rows=indexes.list_cards(filters),
        vendors=indexes.vendors(),
    )


@router.get("/{lang}/models", response_class=HTMLResponse)
def models_route(lang: str, request: Request) -> Response:
    """All models, searchable and filterable."""
    check_lang(lang)
    filters = indexes.parse_model_filters(request.query_params)
    return cached_html(request, ("models-index", lang, filters),
                       lambda: models_index(lang, request.query_params, request.url.path))


@router.get("/{lang}/cards", response_class=HTMLResponse)
def cards_route(lang: str, request: Request) -> Response:
    """All cards, searchable and filterable."""
    check_lang(lang)
    filters = indexes.parse_card_filters(request.query_params)
    return cached_html(request, ("cards-index", lang, filters),
                       lambda: cards_index(lang, request.query_params, request.url.path))


@router.get("/{lang}/credits", response_class=HTMLResponse)
def credits_route(lang: str, request: Request) -> Response:
    """Data sources and licences."""
    check_lang(lang)
    return cached_html(request, ("credits", lang),
                       lambda: render_page(lang, "credits.html", request.url.path))
