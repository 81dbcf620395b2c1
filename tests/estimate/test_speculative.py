"""Speculative decoding (estimate/speculative.py, serving.speculative_estimate): the expected
tokens per step, the speed-up range from the cited acceptance rates, MTP and draft checks."""
from __future__ import annotations

import pytest

from tpscalc.catalog import get_card, get_model
from tpscalc.estimate import engine
from tpscalc.estimate.batched import DecodeParts
from tpscalc.estimate.query import EstimateInputError, Query, Rig, query_for_model
from tpscalc.estimate.serving import speculative_estimate
from tpscalc.estimate.speculative import ACCEPTANCE, expected_tokens, has_mtp, speedup


@pytest.mark.parametrize(("alpha", "d", "expected"), [(0.0, 4, 1.0), (0.5, 1, 1.5),
                                                      (0.7, 2, 1 + 0.7 + 0.49), (1.0, 3, 4.0)])
def test_expected_tokens(alpha: float, d: int, expected: float) -> None:
    assert expected_tokens(alpha, d) == pytest.approx(expected)


def test_a_free_draft_with_full_acceptance_gives_d_plus_one() -> None:
    parts = DecodeParts(0.01, 0.0, 0.0, 0.0, 0.0, 0.0)
    assert speedup(parts, 0.0, 1.0, 3) == pytest.approx(4.0)
    assert speedup(parts, 0.5, 0.0, 3) < 1.0  # nothing accepted: slower


def test_every_acceptance_has_a_source_and_an_order() -> None:
    for acc in ACCEPTANCE.values():
        assert 0 < acc.low <= acc.typical <= acc.high < 1 and acc.sources
        assert all(s.startswith("https://") for s in acc.sources)


@pytest.mark.parametrize(("repo", "name", "expected"), [
    ("Qwen/Qwen3.6-27B", "Qwen3.6-27B", True), ("deepseek-ai/DeepSeek-V3", "DeepSeek-V3", True),
    ("meta-llama/Meta-Llama-3.1-8B", "Llama 3.1-8B", False), (None, "GLM-4.5 Air", True)])
def test_has_mtp(repo: str | None, name: str, expected: bool) -> None:
    assert has_mtp(repo, name) is expected


def _setup(model: str, card: str) -> tuple[object, Rig, Query, object]:
    m = get_model(model)
    rig = Rig.of(get_card(card))
    q = query_for_model(m, Query())
    return m, rig, q, engine.estimate(m, rig, q)  # type: ignore[arg-type]


def test_mtp_on_qwen36_27b_is_in_the_published_range() -> None:
    """Measured on an RTX 4090 with MTP n-max 2: 1.60x (sudoingX/qwen38-mtp#5) to 1.85x
    (#18); the estimate's range must overlap that."""
    m, rig, q, e = _setup("Qwen3.6-27B", "4090")
    s = speculative_estimate(m, rig, q, e, None)  # type: ignore[arg-type]
    low, typical, high = s.speedup
    assert low <= typical <= high and low < 1.85 and high > 1.60
    assert 0.3 < s.extra_memory_gib < 3.0 and "--spec-type draft-mtp" in s.llama_server


def test_a_draft_needs_the_same_vocabulary() -> None:
    m, rig, q, e = _setup("Llama 3.1-8B", "4090")
    with pytest.raises(EstimateInputError, match="tokenizer family"):
        speculative_estimate(m, rig, q, e, get_model("Qwen3.6-27B"))  # type: ignore[arg-type]
    s = speculative_estimate(m, rig, q, e, get_model("Llama 3.2 1B"))  # type: ignore[arg-type]
    assert s.method == "draft" and s.extra_memory_gib > 1.0 and "-md " in s.llama_server


def test_mtp_is_refused_without_mtp_layers() -> None:
    m, rig, q, e = _setup("Llama 3.1-8B", "4090")
    with pytest.raises(EstimateInputError, match="no MTP"):
        speculative_estimate(m, rig, q, e, None)  # type: ignore[arg-type]
