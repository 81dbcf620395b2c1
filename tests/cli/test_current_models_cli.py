"""Issue 8's "Must show" commands against the real catalog, in a subprocess as a user runs them."""
from __future__ import annotations

import json
import subprocess
import sys


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tpscalc", *args], capture_output=True,
                          text=True, timeout=180, check=False)


def test_a_context_beyond_the_model_exits_2_naming_the_limit() -> None:
    done = _run("estimate", "--model", "Llama 3-8B", "--gpu", "4090", "--context", "65536")
    assert done.returncode == 2 and "8,192" in done.stderr and "Traceback" not in done.stderr


def test_the_api_refuses_it_too() -> None:
    from tpscalc import api

    try:
        api.evaluate("Llama 3-8B", "4090", context=65536)
    except api.INPUT_ERRORS as exc:
        assert "8,192" in str(exc)
    else:
        raise AssertionError("a context beyond the model's limit was estimated")


def test_q4_0_and_f16_give_an_estimate() -> None:
    for quant in ("Q4_0", "F16", "BF16"):
        done = _run("estimate", "--model", "Llama 2-7B", "--gpu", "GeForce RTX 4090",
                    "--quant", quant, "--json")
        assert done.returncode == 0, done.stderr
        data = json.loads(done.stdout)
        assert data["quant"] == quant and data["memory"]["weights_gib"] > 0


def _ladder_rank(quant: str) -> int:
    from tpscalc.catalog.quants import get_quant

    return get_quant(quant).quality_rank


def test_starcoder2_15b_by_default_stops_at_iq4_xs() -> None:
    """The reference page: 306 of 818 cards, the smallest a 10 GB P102-101 at IQ4_XS."""
    done = _run("model", "StarCoder 2 15B", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert 250 <= data["cards_fit"] <= 450 and data["min_quality"] == "IQ4_XS"
    fit = [r for r in data["rows"] if r["fits"]]
    assert min(r["memory_gib"] for r in fit) >= 8
    assert max(_ladder_rank(r["quant"]) for r in fit) <= _ladder_rank("IQ4_XS")


def test_the_floor_can_be_lowered() -> None:
    done = _run("model", "StarCoder 2 15B", "--min-quality", "IQ2_XXS", "--json")
    data = json.loads(done.stdout)
    assert data["cards_fit"] > 450
    assert max(_ladder_rank(r["quant"]) for r in data["rows"]) > _ladder_rank("IQ4_XS")


def test_no_embedding_or_old_qa_model_among_the_rows_with_a_speed() -> None:
    done = _run("card", "GeForce RTX 4090", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    from tpscalc.catalog import get_model

    silent = {r["model"] for r in data["rows"] if not get_model(r["slug"]).generates}
    assert {"BIDAF", "Qwen3 Embedding", "bge-reranker-large"} <= silent
    assert not [r["model"] for r in data["rows"] if r["decode"] and r["model"] in silent]
    assert data["fastest"]["model"] not in silent


def test_a_reranker_page_says_it_writes_no_text() -> None:
    done = _run("model", "bge-reranker-large", "--json")
    data = json.loads(done.stdout)
    assert data["fastest"] is None and any("writes no text" in n for n in data["notes"])
    assert all(r["decode"] is None for r in data["rows"])
    # the FAQ agrees with the table: cards hold it, it just has no generation speed
    answers = {f["question"]: f["answer"] for f in data["faq"]}
    assert "smallest card" in answers["bge-reranker-large: which GPU do I need to run it?"]
    assert "writes no text" in answers["bge-reranker-large: how fast is it on a GPU?"]
    assert not any(a.startswith("None of our") for a in answers.values())


def test_max_quality_f16_on_the_command_line_and_in_the_api() -> None:
    done = _run("estimate", "--model", "Llama 2-7B", "--gpu", "4090", "--max-quality", "F16",
                "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["quant"] == "F16"
    from tpscalc.report.request import MODEL_REPORT_PARAMS, openapi_parameters

    (ceiling,) = [p for p in openapi_parameters(MODEL_REPORT_PARAMS) if p["name"] == "max_quality"]
    assert ceiling["schema"]["enum"][:3] == ["F16", "BF16", "Q8_0"]


def test_one_parameter_count_on_the_page() -> None:
    """WizardCoder-15.5B: Epoch records 15.5 B; its StarCoder architecture counts 15.77 B."""
    from tpscalc.web.render import parameters

    done = _run("model", "WizardCoder-15.5B", "--json")
    data = json.loads(done.stdout)
    counted = data["model"]["parameters_total"]
    assert parameters(counted, "en") == "15.8B"
    (size,) = [f["value"] for s in data["record_sections"] for f in s["fields"]
               if f["name"] == "Parameters"]
    assert "15,500,000,000 as recorded" in size and f"{int(counted):,}" in size
    answer = next(q["answer"] for q in data["faq"] if "how many parameters" in q["question"])
    assert "15.8B" in answer
