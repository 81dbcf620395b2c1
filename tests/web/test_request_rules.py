"""One rule for request values on the site, the JSON API and the CLI.

OpenAPI comes from the same table.
"""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner


def test_openapi_document_lists_report_parameters(client) -> None:  # type: ignore[no-untyped-def]
    doc = client.get("/openapi.json").json()
    names = {p["name"]: p for p in doc["paths"]["/api/v1/models/{slug}"]["get"]["parameters"]}
    assert {"context", "min_quality", "max_quality", "kv_type", "min_memory"} <= set(names)
    assert names["min_memory"]["schema"]["type"] == "number"


@pytest.mark.parametrize("text", ["١٠٢٤", "abc", "40\x0096", ""])
def test_cli_site_and_python_api_agree(client, text: str) -> None:  # type: ignore[no-untyped-def]
    from tpscalc.cli.main import app

    site = client.get("/api/v1/estimate", params={"model": "StarCoder 2 15B", "card": "4090",
                                                   "context": text})
    cli = CliRunner().invoke(app, ["estimate", "--model", "StarCoder 2 15B", "--card", "4090",
                                   "--context", text, "--json"])
    if site.status_code == 200:
        assert cli.exit_code == 0 and json.loads(cli.stdout)["context"] == site.json()["context"]
    else:
        assert site.status_code == 400 and cli.exit_code == 2
        assert site.json()["error"]["message"] in cli.stderr
