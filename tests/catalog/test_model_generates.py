"""Which models write text (`Model.generates`, from the architecture and Epoch AI's task labels)."""
from __future__ import annotations

import pytest

from tpscalc.catalog import get_model


@pytest.mark.parametrize("name", ["BIDAF", "Qwen3 Embedding", "Qwen3 Reranker", "EmbeddingGemma",
                                  "bge-reranker-large", "Multilingual-E5-large", "SciBERT",
                                  "XLM-RoBERTa"])
def test_embeddings_rerankers_classifiers_and_old_qa_write_no_text(name: str) -> None:
    assert not get_model(name).generates


@pytest.mark.parametrize("name", ["BERT-Large", "RoBERTa Large", "DeBERTa", "ALBERT-xxlarge",
                                  "AraELECTRA", "CamemBERT", "NV-Embed-v2"])
def test_masked_lm_encoders_and_decoder_embedders_write_no_text(name: str) -> None:
    # Epoch labels these "Language modeling/generation"; they fill masks or embed, never write.
    assert not get_model(name).generates


@pytest.mark.parametrize("name", ["Llama 3-8B", "StarCoder 2 15B", "gpt-oss-120b", "UnifiedQA",
                                  "OpenChat-13b", "T0-XXL", "GPT-2 (1.5B)"])
def test_language_models_and_generative_qa_write_text(name: str) -> None:
    assert get_model(name).generates


@pytest.mark.parametrize("name", ["Transformer (Adaptive Input Embeddings) WT103",
                                  "Retrieval-Augmented Generator", "AWD-LSTM-DOC (fin) (23M)",
                                  "GPT-Neo-1.3B"])
def test_writers_llama_cpp_cannot_run_get_no_speed(name: str) -> None:
    # They write text, but no GGUF of their architecture exists (issue 23): no decode speed.
    m = get_model(name)
    assert not m.runs_in_llama_cpp and not m.generates
