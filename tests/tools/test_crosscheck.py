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
