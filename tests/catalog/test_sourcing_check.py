"""The catalog check (tools/catalog_check.py) passes on the committed catalog, and catches what
it is for: a mixture of experts charged its total, a name's A<n>B contradicted, an impossible KV
cache, a regression of the sourced/approximated counts."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

import catalog_check

from tpscalc.catalog import store
from tpscalc.catalog.schema import Architecture, Model
from tpscalc.catalog.sourcing import sourcing
from tpscalc.estimate.memory import kv_cache_bytes

GIB = 2**30


@pytest.fixture(scope="module")
def report() -> catalog_check.Report:
    return catalog_check.check(store.models(), catalog_check.load_baseline().get("known", {}))


def test_the_committed_catalog_passes(report: catalog_check.Report) -> None:
    assert report.failures == []
    assert catalog_check.regressions(report, catalog_check.load_baseline()) == []


def test_the_counts_cover_every_model(report: catalog_check.Report) -> None:
    assert sum(report.counts.values()) == len(store.models())
    assert report.counts["sourced"] > 0 and report.counts["derived"] > 0


def test_no_mixture_of_experts_reads_its_total() -> None:
    moe = [m for m in store.models() if m.is_moe]
    assert len(moe) > 100
    assert [m.name for m in moe if m.parameters_active >= m.parameters_total] == []


@pytest.mark.parametrize(("name", "low_b", "high_b"), [
    ("GLM-4.7-Flash", 3.0, 4.0),  # 30B-A3B: MLA + 64 experts top-4 (recent_architectures.csv)
    ("NVIDIA-Nemotron-3.5-Lightning-30B-A3B", 2.8, 3.3),  # the Nemotron 3 Nano shape
    ("NVIDIA-Nemotron-3-Super-120B-A12B", 10.0, 13.0),  # llmfit's active_parameters
    ("LFM2-24B-A2B", 1.8, 2.6),
    ("Kimi-K3", 90.0, 110.0),
    ("Nemotron-Cascade-2-30B-A3B", 2.8, 3.3),
])
def test_recent_moe_active_counts(name: str, low_b: float, high_b: float) -> None:
    m = next(m for m in store.models() if m.name == name)
    assert m.is_moe
    assert low_b <= m.parameters_active / 1e9 <= high_b


def _bare(name: str, params: float, **fields: object) -> Model:
    return Model(name=name, slug="x", parameters=params, **fields)  # type: ignore[arg-type]


def test_a_moe_charged_its_total_fails() -> None:
    m = _bare("Example-30B-A3B", 30e9)  # no architecture, no stated active count
    assert catalog_check.name_failure(m) is not None
    stated = _bare("Example-30B-A3B", 30e9, parameters_active_stated=3.1e9)
    assert catalog_check.name_failure(stated) is None and stated.is_moe


def test_an_impossible_kv_cache_fails() -> None:
    arch = Architecture(num_layers=10, hidden_size=1024, num_attention_heads=8, num_kv_heads=8,
                        head_dim=128, vocab_size=1000, intermediate_size=4096)
    fine = _bare("dense", 1e8, architecture=arch)
    assert catalog_check.kv_failure(fine) is None
    low, high = catalog_check.kv_bounds(arch)
    assert low <= 10 * 2 * 8 * 128 * 2 <= high


def test_a_regression_fails(report: catalog_check.Report) -> None:
    baseline = catalog_check.baseline_of(report, {})
    baseline["approximated_max"] -= 1
    baseline["sourced_min"] += 1
    assert len(catalog_check.regressions(report, baseline)) == 2


@pytest.mark.parametrize(("name", "tokens"), [
    ("StarCoder", 8192), ("WizardCoder-15.5B", 8192),  # n_positions 8192
    ("Command R", 131072),  # the model card's 128k (model_architecture_map.csv says why)
    ("Mistral Small 3.1", 131072),
])
def test_context_limits_from_their_sources(name: str, tokens: int) -> None:
    m = next(m for m in store.models() if m.name == name)
    assert catalog_check.context_limit(m) == tokens


@pytest.mark.parametrize(("name", "max_gib"), [
    ("Qwen3-Coder-Next", 1.0),  # 12 of 48 layers attention, 2 KV heads of 256
    ("GLM-4.7-Flash", 3.0),  # MLA: (512 + 64) per layer
])
def test_kv_at_32k(name: str, max_gib: float) -> None:
    arch = next(m for m in store.models() if m.name == name).architecture
    assert arch is not None
    assert kv_cache_bytes(arch, 32768, "f16") / GIB < max_gib


@pytest.mark.parametrize("name", ["TRIMELMext (7M)", "AWD-LSTM-DOC (fin) (23M)",
                                  "DARTS (second order) (PTB)"])
def test_architectures_outside_llama_cpp_get_no_speed(name: str) -> None:
    m = next(m for m in store.models() if m.name == name)
    assert not m.runs_in_llama_cpp and not m.generates
    assert sourcing(m).certainty == "approximated"
