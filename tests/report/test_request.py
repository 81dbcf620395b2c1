"""The one request definition: every interface parses the same text into the same request."""
from __future__ import annotations

import pytest

from tpscalc.estimate.query import MAX_CONTEXT, EstimateInputError, Query
from tpscalc.report.request import (
    CARD_REPORT_PARAMS,
    MODEL_REPORT_PARAMS,
    PARAMS,
    Filters,
    RequestError,
    field_names,
    openapi_parameters,
    parse_request,
)


def test_the_table_describes_every_field_once() -> None:
    attrs = {(p.target, p.attr) for p in PARAMS}
    assert len(attrs) == len(PARAMS)
    assert {("query", a) for a in field_names("query")} <= attrs
    assert {("filters", a) for a in field_names("filters")} <= attrs


@pytest.mark.parametrize(("text", "tokens"), [
    ("8192", 8192), (" 8_192 ", 8192), ("8,192", 8192), ("١٠٢٤", 1024)])
def test_context_text_rule(text: str, tokens: int) -> None:
    assert parse_request({"context": text}).query.context == tokens


def test_an_empty_value_is_refused_unless_it_is_a_form_choice() -> None:
    with pytest.raises(RequestError, match="parameter 'context' is empty"):
        parse_request({"context": ""})
    blank = parse_request({"max_quality": "", "backend": "", "ram": "", "search": "",
                           "min_memory": ""})
    assert blank == parse_request({})


@pytest.mark.parametrize(("raw", "code"), [
    ({"context": "abc"}, "bad_context"),
    ({"context": "0"}, "bad_context"),
    ({"context": str(MAX_CONTEXT + 1)}, "bad_context"),
    ({"context": "40\x0096"}, "bad_context"),
    ({"min_memory": "nan"}, "bad_memory"),
    ({"max_memory": "inf"}, "bad_memory"),
    ({"max_memory": "0"}, "bad_memory"),
    ({"min_quality": "Q9"}, "bad_quality"),
    ({"backend": "cuda12"}, "bad_backend"),
    ({"kv_type": "q5_1"}, "bad_kv_type"),
    ({"sort": "price"}, "bad_sort"),
    ({"lang": "fr"}, "unknown_language"),
    ({"search": "rtx\x1b[31m"}, "bad_search"),
    ({"all": "maybe"}, "bad_all"),
])
def test_bad_values_name_their_field(raw: dict[str, str], code: str) -> None:
    with pytest.raises(RequestError) as info:
        parse_request(raw)
    assert info.value.code == code and str(info.value)


def test_values_are_spelled_canonically_once() -> None:
    r = parse_request({"min_quality": "q4_k_m", "max_quality": "q8_0", "backend": "ROCm",
                       "kv_type": "Q8_0", "search": "  rtx 40  ", "all": "on", "lang": "es"})
    assert r.query == Query(min_quality="Q4_K_M", max_quality="Q8_0", backend="rocm",
                            kv_type="q8_0")
    assert r.filters == Filters(search="rtx 40", show_all=True) and r.lang == "es"
    assert hash(r) == hash(parse_request({"min_quality": "Q4_K_M", "max_quality": "Q8_0",
                                          "backend": "rocm", "kv_type": "q8_0",
                                          "search": "rtx 40", "all": "1", "lang": "es"}))


def test_a_range_given_end_first_is_the_same_range() -> None:
    r = parse_request({"min_memory": "24", "max_memory": "8", "min_quality": "Q8_0",
                       "max_quality": "IQ2_M"})
    assert (r.filters.min_memory_gib, r.filters.max_memory_gib) == (8, 24)
    assert (r.query.max_quality, r.query.min_quality) == ("Q8_0", "IQ2_M")


def test_a_query_checks_itself_when_made() -> None:
    with pytest.raises(EstimateInputError):
        Query(context=-1)
    with pytest.raises(EstimateInputError):
        Query(backend="directx")


def test_strict_parsing_rejects_unknown_keys() -> None:
    with pytest.raises(RequestError, match="unknown option 'contxt'"):
        parse_request({"contxt": 8192}, MODEL_REPORT_PARAMS, strict=True)
    parse_request({"utm_source": "x"}, MODEL_REPORT_PARAMS)  # a query string may carry others


def test_openapi_parameters_are_typed() -> None:
    params = {p["name"]: p["schema"] for p in openapi_parameters(CARD_REPORT_PARAMS)}
    assert params["context"]["type"] == "integer" and params["context"]["maximum"] == MAX_CONTEXT
    assert params["all"]["type"] == "boolean"
    assert "Q4_K_M" in params["min_quality"]["enum"] and params["sort"]["enum"][0] == "speed"
