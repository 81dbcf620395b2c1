"""One estimate, several languages: the same reports as building each language on its own."""
from __future__ import annotations

from dataclasses import replace

from tpscalc.catalog import get_card, get_model
from tpscalc.i18n import LANGUAGES
from tpscalc.report.card_report import build_card_report, build_card_reports
from tpscalc.report.model_report import build_model_report, build_model_reports
from tpscalc.report.request import Filters, ReportRequest
from tpscalc.report.serialize import report_json


def test_model_reports_in_every_language_match_one_at_a_time() -> None:
    model = get_model("StarCoder 2 15B")
    request = ReportRequest(filters=Filters(show_all=True))
    together = build_model_reports(model, request, LANGUAGES)
    for lang, report in zip(LANGUAGES, together, strict=True):
        alone = build_model_report(model, replace(request, lang=lang))
        assert report_json(report) == report_json(alone)


def test_card_reports_in_every_language_match_one_at_a_time() -> None:
    card = get_card("RTX 4090")
    request = ReportRequest()
    together = build_card_reports(card, request, LANGUAGES)
    for lang, report in zip(LANGUAGES, together, strict=True):
        alone = build_card_report(card, replace(request, lang=lang))
        assert report_json(report) == report_json(alone)


def test_the_exported_reports_keep_the_model_context_limit() -> None:
    """A model that holds fewer tokens than the default context: every language's report (the
    static export's path) uses its limit, as the served page does."""
    model = get_model("GPT-2 (124M)")
    limit = model.architecture.max_context  # type: ignore[union-attr]
    assert limit is not None and limit < ReportRequest().query.context
    for report in build_model_reports(model, ReportRequest(), LANGUAGES):
        assert report_json(report)["context"] == limit
