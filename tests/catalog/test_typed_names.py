"""Names as people type them: Hugging Face ids, GGUF files, ollama tags, fine-tunes of llmfit's
list (catalog/names.py, catalog/hf_index.py, catalog.resolve_model), and card aliases."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tpscalc import api
from tpscalc.catalog import NameNotFoundError, get_card, resolve_model, store
from tpscalc.catalog.hf_index import INDEX_FILE, KINDS, find_repo
from tpscalc.catalog.names import name_variants, plain_name, repo_keys
from tpscalc.estimate.query import EstimateInputError
from tpscalc.report.rigs import parse_cards


@pytest.mark.parametrize(("typed", "plain"), [
    ("unsloth/gpt-oss-20b-GGUF", "gpt-oss-20b"), ("Qwen3-8B-Q4_K_M.gguf", "Qwen3-8B"),
    ("Qwen3-8B-UD-Q4_K_XL-00001-of-00002.gguf", "Qwen3-8B"),
    ("mlx-community/Qwen3-8B-4bit", "Qwen3-8B"), ("llama3.1:8b", "llama3.1 8b"),
    ("qwen3:latest", "qwen3"), ("Qwen2.5-Coder-7B-Instruct", "Qwen2.5-Coder-7B-Instruct"),
    ("google_gemma-3-1b-it-Q4_K_M.gguf", "gemma-3-1b-it"), ("deepseek_v3", "deepseek_v3"),
    ("Jackrong/Qwopus3.6-27B-Coder-MTP-GGUF", "Qwopus3.6-27B-Coder"),
])
def test_plain_name_drops_what_never_changes_the_model(typed: str, plain: str) -> None:
    assert plain_name(typed) == plain


def test_variants_rewrite_dates_meta_and_instruct() -> None:
    assert "Qwen3-235B-A22B Jul 2025" in name_variants("Qwen3-235B-A22B-Instruct-2507")
    assert "DeepSeek-R1 May" in name_variants("DeepSeek-R1-0528")
    assert "Llama-3.1-8B" in name_variants("Meta-Llama-3.1-8B-Instruct")
    assert repo_keys("Jackrong/Qwopus3.5-27B-v3-GGUF")[-1] == "jackrong/qwopus3.5-27b-v3"


@pytest.mark.parametrize(("typed", "name", "kind"), [
    ("meta-llama/Llama-3.3-70B-Instruct", "Llama 3.3 70B", "alias"),
    ("google/gemma-3-27b-it", "Gemma 3 27B", "alias"),
    ("moonshotai/Kimi-K2-Instruct", "Kimi K2", "alias"),
    ("Llama-3.3-70B-Instruct", "Llama 3.3 70B", "alias"),
    ("Meta-Llama-3.1-8B-Instruct", "Llama 3.1-8B", "fine-tune"),
    ("unsloth/gpt-oss-20b-GGUF", "gpt-oss-20b", "alias"),
    ("DeepSeek-R1-0528", "DeepSeek-R1 (May 2025)", "alias"),
    ("Qwen3-235B-A22B-Instruct-2507", "Qwen3-235B-A22B (Jul 2025)", "fine-tune"),
    ("gemma-3-1b-it", "Gemma 3 1B", "alias"),
    ("Qwen2.5-Coder-7B-Instruct", "Qwen2.5-Coder (7B)", "fine-tune"),
    ("LFM2-1.2B", "LFM2.5-1.2B", "fine-tune"),
    ("Qwen3-8B-Q4_K_M.gguf", "Qwen3-8B", "alias"),
    ("Jackrong/Qwopus3.5-27B-v3-GGUF", "Qwen3.5-27B", "fine-tune"),
    ("bartowski/Llama-3.3-70B-Instruct-GGUF", "Llama 3.3 70B", "alias"),
    ("google_gemma-3-1b-it-Q4_K_M.gguf", "Gemma 3 1B", "alias"),
])
def test_repository_ids_resolve(typed: str, name: str, kind: str) -> None:
    found = resolve_model(typed)
    assert found.model.name == name
    assert found.resolved_as is not None
    assert (found.resolved_as["kind"], found.resolved_as["base"]) == (kind, name)


@pytest.mark.parametrize(("typed", "name"), [
    ("llama3.1:8b", "Llama 3.1-8B"), ("qwen3:30b-a3b", "Qwen3-30B-A3B"),
    ("gpt-oss:20b", "gpt-oss-20b"), ("qwen2.5-coder:7b", "Qwen2.5-Coder (7B)"),
])
def test_ollama_tags_resolve(typed: str, name: str) -> None:
    assert resolve_model(typed).model.name == name


def test_catalog_names_resolve_as_before_without_the_index() -> None:
    found = resolve_model("gpt-oss-20b")
    assert (found.model.name, found.resolved_as) == ("gpt-oss-20b", None)


@pytest.mark.parametrize(("typed", "listed"), [
    ("Nemotron 3 Nano", {"NVIDIA-Nemotron-3-Nano-4B", "NVIDIA-Nemotron-3-Nano-30B-A3B"}),
    ("qwen 3.6", {"Qwen3.6-27B", "Qwen3.6-35B-A3B"}),
])
def test_sizes_are_listed_not_picked(typed: str, listed: set[str]) -> None:
    with pytest.raises(NameNotFoundError, match="ambiguous") as err:
        resolve_model(typed)
    assert listed <= set(err.value.suggestions)


def test_unknown_model_still_suggests() -> None:
    with pytest.raises(NameNotFoundError, match="unknown model") as err:
        resolve_model("Llama 3.3 7OB zzz")
    assert err.value.suggestions


def test_fine_tune_takes_the_lists_facts() -> None:
    found = resolve_model("Qwen/Qwen3-235B-A22B-Instruct-2507")
    assert found.resolved_as is not None and found.resolved_as["context"] == 262144
    assert found.model.architecture is not None
    assert found.model.architecture.max_context == 262144


def test_index_is_small_and_points_at_catalog_models() -> None:
    path = os.path.join(store.DATA_DIR, INDEX_FILE)
    assert os.path.getsize(path) < 1.5e6
    data = store.read_json(INDEX_FILE)
    slugs = {m.slug for m in store.models()}
    assert set(data["models"]) <= slugs
    kinds = {row[2] for row in data["repos"]}
    assert kinds <= set(range(len(KINDS)))
    assert len(data["repos"]) > 10_000


def test_index_is_built_from_this_catalog() -> None:
    """After models.json changes, run `python tools/build_hf_aliases.py` (make catalog does)."""
    assert store.read_json(INDEX_FILE)["models_crc32"] == store.source_crcs()["models.json"]


def test_sized_from_the_lists_fields() -> None:
    data = store.read_json(INDEX_FILE)
    repo = next(r[0] for r in data["repos"] if r[2] == KINDS.index("architecture"))
    match = find_repo(repo)
    assert match is not None and match.config
    from tpscalc.sources.load import resolve_name

    found = resolve_name(repo)
    assert found.resolved_as is not None and found.resolved_as["kind"] == "architecture"
    assert found.model.architecture is not None
    assert found.model.architecture.num_layers == match.config["num_hidden_layers"]
    assert api.evaluate(repo, "RTX 4090")["memory"]["total_gib"] > 0


def test_resolved_as_in_the_estimate_json() -> None:
    out = api.evaluate("Jackrong/Qwopus3.5-27B-v3-GGUF", "RTX 4090")
    assert out["resolved_as"]["kind"] == "fine-tune"
    assert out["resolved_as"]["base"] == "Qwen3.5-27B"
    assert "resolved_as" not in api.evaluate("gpt-oss-20b", "RTX 4090")


def test_the_index_loads_only_on_a_name_the_catalog_lacks() -> None:
    code = ("import sys; from tpscalc.catalog import get_model; get_model('gpt-oss-20b'); "
            "print('tpscalc.catalog.hf_index' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize(("typed", "name"), [
    ("7900 xtx", "Radeon RX 7900 XTX"), ("dgx spark", "GB10"), ("DGX Spark", "GB10"),
    ("strix halo", "Ryzen AI Max+ 395 (Radeon 8060S)"),
    ("m3 ultra 512", "Apple M3 Ultra (80-core GPU)"),
    ("mac studio m3 ultra 512gb", "Apple M3 Ultra (80-core GPU)"),
    ("m4 max 128gb", "Apple M4 Max (40-core GPU)"),
    ("Tesla V100 SXM2 16 GB", "Tesla V100 SXM2 16 GB (2017)"),
    ("GeForce RTX 3050 Ti Mobile", "GeForce RTX 3050 Ti Mobile (GA106)"),
])
def test_card_names_people_type(typed: str, name: str) -> None:
    assert get_card(typed).name == name


def test_mac_studio_m3_ultra_lists_both_chips() -> None:
    with pytest.raises(NameNotFoundError, match="ambiguous") as err:
        get_card("mac studio m3 ultra")
    assert {"Apple M3 Ultra (60-core GPU)", "Apple M3 Ultra (80-core GPU)"} <= set(
        err.value.suggestions)


@pytest.mark.parametrize(("typed", "first"), [("rtx 4900", "GeForce RTX 4090"),
                                               ("dgx sprak", "GB10")])
def test_typo_suggestions_respect_model_numbers(typed: str, first: str) -> None:
    with pytest.raises(NameNotFoundError, match="unknown") as err:
        get_card(typed)
    assert err.value.suggestions[0] == first
    assert "RTX A400" not in err.value.suggestions[:1]


def test_card_counts_are_at_most_two_digits() -> None:
    assert [c.name for c in parse_cards("2x 7900 xtx")] == ["Radeon RX 7900 XTX"] * 2
    assert [c.name for c in parse_cards("7900 xtx")] == ["Radeon RX 7900 XTX"]
    with pytest.raises(EstimateInputError, match="card count must be 1 to 16, not 20"):
        parse_cards("20x 4090")


def test_must_show_cli_estimate() -> None:
    done = subprocess.run([sys.executable, "-m", "tpscalc", "estimate", "--model",
                           "meta-llama/Llama-3.3-70B-Instruct", "--gpu", "2x 7900 xtx", "--json"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["gpu"] == "Radeon RX 7900 XTX + Radeon RX 7900 XTX"
    assert data["resolved_as"]["repo"] == "meta-llama/Llama-3.3-70B-Instruct"
    assert data["decode"]["tokens_per_s"] > 0


def test_cli_table_says_fine_tune_of() -> None:
    done = subprocess.run([sys.executable, "-m", "tpscalc", "estimate", "--model",
                           "Jackrong/Qwopus3.5-27B-v3-GGUF", "--gpu", "4090"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "a fine-tune of Qwen3.5-27B" in done.stdout


def test_web_api_says_how_a_name_resolved() -> None:
    from fastapi.testclient import TestClient

    from tpscalc.web.app import create_app

    client = TestClient(create_app())
    answer = client.get("/api/v1/estimate", params={"model": "Jackrong/Qwopus3.5-27B-v3-GGUF",
                                                    "card": "2x 7900 xtx"})
    assert answer.status_code == 200
    assert answer.json()["resolved_as"]["base"] == "Qwen3.5-27B"
    listed = client.get("/api/v1/estimate", params={"model": "qwen 3.6", "card": "dgx spark"})
    assert listed.status_code == 404
    assert "ambiguous" in listed.json()["error"]["message"]


@pytest.mark.parametrize("name", ["OpenThaiGPT R1 32b / OTG-R1 (32B)", "Theseus 6/768"])
def test_catalog_names_with_a_slash_still_resolve(name: str) -> None:
    found = resolve_model(name)
    assert (found.model.name, found.resolved_as) == (name, None)
