"""The site's "what would make it fit" page (issue 27): one model on one card (with the rig
options of the page it was reached from) that does not fit, and the changes that would make it
run, each with the speed it gives; the model and card tables link here from their "does not
fit" rows."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from tpscalc import api
from tpscalc.estimate.runtimes import get_runtime
from tpscalc.report.fit_ways import fit_way_texts
from tpscalc.report.request import ReportRequest, to_query
from tpscalc.web import reports
from tpscalc.web.errors import WebError
from tpscalc.web.page_cache import cached_html
from tpscalc.web.params import check_lang, query_text, refuse_other_fields, request_from
from tpscalc.web.render import render_page

router = APIRouter(include_in_schema=False)

# The fields of the model and card pages that an estimate takes too: what the link carries.
FIT_PAGE_PARAMS = ("context", "min_quality", "max_quality", "backend", "kv_type", "text_only",
                   "runtime", "gpus", "ram")


def fit_url_maker(lang: str, request: ReportRequest, export: bool, *, model: str | None = None,
                  card: str | None = None) -> Callable[[str], str] | None:
    """The fit page's address for a row's slug (the card's on a model page, the model's on a
    card page) with the page's settings; None in the static export (no server answers it)."""
    if export:
        return None
    query = {k: v for k, v in to_query(request).items() if k in FIT_PAGE_PARAMS}
    tail = query_text(query)

    def url(slug: str) -> str:
        return f"/{lang}/fit/{model or slug}/{card or slug}{tail}"

    return url


@router.get("/{lang}/fit/{model_slug}/{card_slug}", response_class=HTMLResponse)
def fit_route(lang: str, model_slug: str, card_slug: str, request: Request) -> Response:
    """What would make `model_slug` fit on `card_slug`, with the speed each change gives."""
    check_lang(lang)
    model, card = reports.find_model(model_slug), reports.find_card(card_slug)
    params = request.query_params
    refuse_other_fields(params, (*FIT_PAGE_PARAMS, "lang"))
    asked = request_from(params, FIT_PAGE_PARAMS, lang)
    options: dict[str, Any] = {k: v for k, v in params.items()
                                  if k in FIT_PAGE_PARAMS and v != ""}
    key = ("fit", model.slug, card.slug, lang, tuple(sorted(options.items())))

    def render() -> str:
        try:
            answer = api.evaluate(model.slug, card.slug, compare=False, **options)
        except api.INPUT_ERRORS as exc:
            raise WebError(400, "bad_input", str(exc)) from None
        heading, ways = fit_way_texts(answer, lang)
        return render_page(lang, "fit.html", request.url.path, model=model, card=card,
                           answer=answer, heading=heading, ways=ways,
                           runtime_label=get_runtime(asked.query.runtime).label)

    return cached_html(request, key, render)
