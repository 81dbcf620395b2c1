"""The architecture cross-check: its rules, and the committed report (zero unresolved)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

import archsources
import crosscheck
from matching import MapRow

from tpscalc.catalog.schema import Architecture

SHARED_SOURCES = crosscheck.DEFAULT_SHARED / "data" / "sources"
BASE = {"num_layers": 4, "hidden_size": 256, "intermediate_size": 512, "num_attention_heads": 4,
        "num_kv_heads": 4, "head_dim": 64, "vocab_size": 1000}


def _cand(source: str, **fields: object) -> archsources.Candidate:
    arch = Architecture(**dict(BASE, source=f"{source}:org/m", **fields))  # type: ignore[arg-type]
    return archsources.Candidate(source, "org/m", "org/m", arch)


def _check(catalog: archsources.Candidate, other: archsources.Candidate,
           row: MapRow | None = None) -> list[crosscheck.Disagreement]:
    assert catalog.arch is not None
    model = {"name": "M", "hf_repo": "org/m"}
    return crosscheck.check_model(model, catalog.arch, row, lambda repo: [other])


def test_verbatim_config_beats_a_derived_list() -> None:
    found = _check(_cand("hfconfig", num_kv_heads=2), _cand("llmfit", num_kv_heads=4))
    assert [(d.field, d.resolution != "") for d in found] == [("num_kv_heads", True)]


def test_derived_value_against_a_verbatim_config_is_unresolved() -> None:
    found = _check(_cand("llmfit", num_kv_heads=4), _cand("hfconfig", num_kv_heads=2))
    assert [(d.field, d.resolution) for d in found] == [("num_kv_heads", "")]


def test_a_field_the_source_cannot_express_is_no_disagreement() -> None:
    # llmfit's list has no sliding window: its silence is not a value
    found = _check(_cand("hfconfig", sliding_window=512, sliding_window_layers=3),
                   _cand("llmfit"))
    assert found == []


def test_same_rank_disagreement_needs_the_hand_map() -> None:
    catalog, other = _cand("litgpt", max_context=4096), _cand("mlc", max_context=2048)
    assert [d.resolution for d in _check(catalog, other)] == [""]
    row = MapRow("litgpt:org/m", {}, "4096 in https://huggingface.co/org/m/blob/main/config.json")
    assert [d.resolution != "" for d in _check(catalog, other, row)] == [True]


@pytest.mark.skipif(not SHARED_SOURCES.exists(), reason="shared source data not present")
def test_committed_report_is_current_and_has_no_unresolved_disagreement() -> None:
    text, unresolved = crosscheck.report(crosscheck.DEFAULT_SHARED)
    assert unresolved == 0
    assert crosscheck.REPORT.read_text(encoding="utf-8") == text


def test_readme_states_how_many_models_are_flagged_for_unexpressed_facts() -> None:
    from tpscalc.catalog import store

    n = sum(1 for m in store.models() if m.architecture and m.architecture.unexpressed)
    readme = (crosscheck.ROOT / "README.md").read_text(encoding="utf-8")
    assert f"So are {n} models whose only source cannot express" in readme


def _validated(**fields: object) -> Architecture:
    arch = archsources._validated(dict(BASE, source="litgpt:org/m", **fields))
    assert isinstance(arch, Architecture)
    return arch


def test_an_untied_litgpt_shape_is_tied_where_only_the_tied_count_is_the_repositorys() -> None:
    untied = _validated(tied_embeddings=False)
    tied = _validated(tied_embeddings=True)
    assert untied.params_total and tied.params_total
    assert untied.params_total - tied.params_total == BASE["vocab_size"] * BASE["hidden_size"]
    got = archsources.tie_from_count(untied, tied.params_total)
    assert got is not None and got.tied_embeddings and got.params_total == tied.params_total
    # the untied count, no count, or a count neither shape gives: kept as it is
    assert archsources.tie_from_count(untied, untied.params_total) is None
    assert archsources.tie_from_count(untied, None) is None
    assert archsources.tie_from_count(untied, 2 * untied.params_total) is None
    # never untied: a tied model's repository may store a copy of the head llama.cpp drops
    assert archsources.tie_from_count(tied, untied.params_total) is None


@pytest.mark.parametrize(("name", "params_b"), [("Llama 3.2 3B", 3.213), ("Qwen3-4B", 4.022),
                                                ("Qwen2.5-3B", 3.086)])
def test_small_models_with_a_tied_head_are_counted_with_one_embedding_table(
        name: str, params_b: float) -> None:
    from tpscalc.catalog import get_model
    arch = get_model(name).architecture
    assert arch is not None and arch.tied_embeddings
    assert arch.params_total == pytest.approx(params_b * 1e9, rel=1e-3)
