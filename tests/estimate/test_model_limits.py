"""A model's own context limit: refused beyond it, the default lowered to it, llama-bench rows
replayed as run (`tpscalc.estimate.query.query_for_model`)."""
from __future__ import annotations

import pytest

from tpscalc.catalog import get_model
from tpscalc.estimate.query import (
    DEFAULT_CONTEXT,
    EstimateInputError,
    Query,
    model_context_limit,
    query_for_model,
)


def test_llama_3_8b_holds_8192() -> None:
    assert model_context_limit(get_model("Llama 3-8B")) == 8192


def test_a_context_beyond_the_limit_is_refused_with_the_limit_named() -> None:
    with pytest.raises(EstimateInputError, match="8,192") as err:
        query_for_model(get_model("Llama 3-8B"), Query(context=65536))
    assert err.value.code == "context_beyond_model"


@pytest.mark.parametrize("context", [1, 4096, 8192])
def test_a_context_within_the_limit_is_kept(context: int) -> None:
    assert query_for_model(get_model("Llama 3-8B"), Query(context=context)).context == context


def test_the_default_context_is_lowered_to_a_shorter_limit() -> None:
    gpt2 = get_model("GPT-2 (124M)")
    assert model_context_limit(gpt2) == 1024 < DEFAULT_CONTEXT
    assert query_for_model(gpt2, Query()).context == 1024


def test_a_llama_bench_test_is_replayed_past_the_trained_length() -> None:
    deep = Query(context=33280, depth=32768, n_prompt=512)
    assert query_for_model(get_model("Llama 2-7B"), deep) is deep
