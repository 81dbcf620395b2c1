"""--prefer / --min-tps through the request, the model report and the estimate's quality block."""
from __future__ import annotations

import pytest

from tpscalc import api
from tpscalc.report.request import RequestError, parse_request


def test_estimate_has_a_quality_block() -> None:
    out = api.evaluate("Llama 3.1-8B", "4090", quant="Q4_K_M")
    q = out["quality"]
    assert q["basis"] == "fit" and q["kld_low"] < q["kld"] < q["kld_high"]
    assert q["top1_low_pct"] < q["top1_agree_pct"] < q["top1_high_pct"] <= 100
    assert q["sources"] and q["words"] == "near-lossless"


def test_min_tps_picks_the_best_quality_reaching_it() -> None:
    report = api.model_report("Qwen3-32B", min_tps=30)
    default = {r["gpu"]: r for r in api.report_json(api.model_report("Qwen3-32B"))["rows"]}
    rows = api.report_json(report)["rows"]
    assert rows and all("quality" in r for r in rows)
    changed = 0
    for r in rows:
        d = default.get(r["gpu"])
        if d is None or not r["decode"]:
            continue
        if d["decode"]["tokens_per_s"] >= 30:  # already reaching it: the seed's choice stays
            assert r["quant"] == d["quant"]
        elif r["decode"]["tokens_per_s"] >= 30:
            changed += 1
            assert r["quality"]["kld"] >= d["quality"]["kld"]
    assert changed > 0


@pytest.mark.parametrize("raw", [{"min_tps": "0"}, {"min_tps": "fast"}, {"prefer": "size"}])
def test_bad_choice_options(raw: dict[str, str]) -> None:
    with pytest.raises(RequestError):
        parse_request(raw)


def test_prefer_parses() -> None:
    r = parse_request({"prefer": "speed", "min_tps": "30"})
    assert (r.filters.prefer, r.filters.min_tps) == ("speed", 30.0)
