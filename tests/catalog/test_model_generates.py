"""Which models write text (`Model.generates`, from the architecture and Epoch AI's task labels)."""
from __future__ import annotations

import pytest

from tpscalc.catalog import get_model


@pytest.mark.parametrize("name", ["BIDAF", "Qwen3 Embedding", "Qwen3 Reranker", "EmbeddingGemma",
                                  "bge-reranker-large", "Multilingual-E5-large", "SciBERT",
                                  "XLM-RoBERTa"])
def test_embeddings_rerankers_classifiers_and_old_qa_write_no_text(name: str) -> None:
    assert not get_model(name).generates


@pytest.mark.parametrize("name", ["Llama 3-8B", "StarCoder 2 15B", "gpt-oss-120b", "UnifiedQA",
                                  "OpenChat-13b"])
def test_language_models_and_generative_qa_write_text(name: str) -> None:
    assert get_model(name).generates
