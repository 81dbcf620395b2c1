"""`tpscalc estimate --parallel N / --users-at T` and the API's parallel=: the serving block,
its shape, and bad input in one line."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tpscalc import api


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tpscalc", "estimate", *args],
                          capture_output=True, text=True, timeout=120, check=False)


def test_parallel_32_on_an_h100() -> None:
    done = _run("--model", "Llama 3.1-8B", "--gpu", "H100 SXM5 80 GB", "--parallel", "32",
                "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    s = data["serving"]
    assert set(s) >= {"parallel", "memory", "fits", "decode", "time_to_first_token_s",
                      "command", "single_decode_tokens_per_s"}
    single = data["decode"]["tokens_per_s"]
    assert s["fits"] and s["parallel"] == 32
    assert s["decode"]["aggregate_tokens_per_s"] > 5 * single
    assert s["decode"]["per_user_tokens_per_s"] < single
    assert s["memory"]["kv_cache_gib"] == pytest.approx(32 * data["memory"]["kv_cache_gib"],
                                                        rel=1e-3)
    assert s["time_to_first_token_s"] > data["prefill"]["time_to_first_token_s"]
    assert " -np 32" in s["command"]["llama_server"]
    assert f"-c {32 * data['context']}" in s["command"]["llama_server"]


def test_users_at_gives_a_number_of_users() -> None:
    done = _run("--model", "Qwen3.6-27B", "--gpu", "4090", "--users-at", "20", "--json")
    assert done.returncode == 0, done.stderr
    u = json.loads(done.stdout)["serving"]["users_at"]
    assert u["users"] >= 1 and u["limited_by"] in ("speed", "memory")
    assert u["decode"]["per_user_tokens_per_s"] >= 20


def test_table_shows_the_serving_line() -> None:
    done = _run("--model", "Llama 3.1-8B", "--gpu", "4090", "--parallel", "4")
    assert done.returncode == 0, done.stderr
    assert "4 users at once" in done.stdout


@pytest.mark.parametrize("args", [("--parallel", "0"), ("--parallel", "many"),
                                  ("--users-at", "-3"), ("--parallel", "5000")])
def test_bad_serving_input_is_one_line(args: tuple[str, ...]) -> None:
    done = _run("--model", "Llama 3.1-8B", "--gpu", "4090", *args)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_api_parallel_matches_the_cli_shape() -> None:
    out = api.evaluate("Llama 3.1-8B", "4090", parallel=8)
    assert out["serving"]["parallel"] == 8 and out["serving"]["decode"]["parallel"] == 8
    one = api.evaluate("Llama 3.1-8B", "4090", parallel=1)
    assert one["serving"]["decode"]["aggregate_tokens_per_s"] == pytest.approx(
        one["decode"]["tokens_per_s"], abs=0.05)


def test_csv_rows_take_parallel() -> None:
    rows = api.evaluate_many([{"model": "Llama 3.1-8B", "card": "4090", "parallel": "4"},
                              {"model": "Llama 3.1-8B", "card": "4090", "parallel": "0"}])
    assert rows[0]["serving"]["parallel"] == 4
    assert rows[1]["error"]


def test_mtp_estimate_has_memory_speedup_and_command() -> None:
    done = _run("--model", "Qwen3.6-27B", "--gpu", "4090", "--mtp", "--json")
    assert done.returncode == 0, done.stderr
    sp = json.loads(done.stdout)["speculative"]
    assert sp["method"] == "mtp" and sp["extra_memory_gib"] > 0
    assert 1.0 < sp["speedup"]["low"] <= sp["speedup"]["typical"] <= sp["speedup"]["high"]
    assert "--spec-type draft-mtp" in sp["command"]["llama_server"] and sp["sources"]


def test_a_draft_of_another_family_is_one_line() -> None:
    done = _run("--model", "Llama 3.1-8B", "--gpu", "4090", "--draft", "Qwen3.6-27B")
    assert done.returncode == 2 and "tokenizer family" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
