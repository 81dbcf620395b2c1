"""Model names resolve the way people type them."""
from __future__ import annotations

import pytest

from tpscalc.catalog import store
from tpscalc.catalog.lookup import NameNotFoundError, resolve


@pytest.mark.parametrize("query", ["starcoder2-15b", "StarCoder 2 15B", "starcoder-2-15b",
                                   "starcoder 2 15b"])
def test_starcoder2_spellings(query: str) -> None:
    assert resolve(query, store.models(), "model").name == "StarCoder 2 15B"


@pytest.mark.parametrize(("query", "name"), [
    ("Llama 2-7B", "Llama 2-7B"), ("llama-2-7b", "Llama 2-7B"), ("gpt-oss-20b", "gpt-oss-20b"),
    ("Qwen3-30B-A3B", "Qwen3-30B-A3B"),
])
def test_exact_names(query: str, name: str) -> None:
    assert resolve(query, store.models(), "model").name == name


def test_unknown_model_lists_close_names() -> None:
    with pytest.raises(NameNotFoundError) as err:
        resolve("starcoder9-99b", store.models(), "model")
    assert err.value.suggestions
    assert any("StarCoder" in s for s in err.value.suggestions)
