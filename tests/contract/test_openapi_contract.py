"""schemathesis against the ASGI app in process: every documented operation, generated inputs,
all checks (status codes, content types, response schemas, no 5xx), a bounded number of cases."""
from __future__ import annotations

import pytest

schemathesis = pytest.importorskip("schemathesis")

from hypothesis import HealthCheck, settings

from tpscalc.web.app import create_app
from tpscalc.web.guard import Limits

# Built at import, before the session's fixtures: the guard's deadline and queue wait are
# stretched here as tests/conftest.py stretches them everywhere else, so a slow case on a loaded
# machine is checked, not answered 503 (a documented answer, which would hide it).
schema = schemathesis.openapi.from_asgi(
    "/openapi.json", create_app(limits=Limits(queue_wait_s=3600.0, deadline_s=3600.0)))


# The two report routes build a whole report per generated case (a rig card report takes
# seconds over the real catalog): over a minute on 2 cores, so they run with `-m slow` (CI runs
# it after the default suite); every other operation runs by default.
REPORTS = "^/api/v1/(models|cards)/"
SETTINGS = settings(max_examples=25, deadline=None, derandomize=True,
                    suppress_health_check=list(HealthCheck))


@schema.exclude(path_regex=REPORTS).parametrize()
@SETTINGS
def test_api_answers_as_documented(case) -> None:  # type: ignore[no-untyped-def]
    _check(case)


@pytest.mark.slow
@schema.include(path_regex=REPORTS).parametrize()
@SETTINGS
def test_report_routes_answer_as_documented(case) -> None:  # type: ignore[no-untyped-def]
    _check(case)


def _check(case) -> None:  # type: ignore[no-untyped-def]
    """The response to `case` is what the OpenAPI document says it is."""
    response = case.call()
    assert response.status_code != 503, response.text  # no deadline can pass (see `schema`)
    if response.status_code == 400 and response.json()["error"]["code"] == "context_beyond_model":
        # The schema bounds the context by the longest any model holds; each model's own limit
        # is a fact of the catalog the schema cannot state, refused by name (tested in web/).
        assert "tokens of context" in response.json()["error"]["message"]
        return
    if response.status_code in (414, 431):
        # Over a documented size limit: refused before any parameter is read, so schemathesis's
        # negative cases (a schema-violating value in a long address) count as rejected.
        assert response.json()["error"]["code"] in ("uri_too_long", "headers_too_large")
        return
    case.validate_response(response)
