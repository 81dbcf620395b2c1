"""Encoder and recurrent models in the built catalog: kinds and counts against Epoch's figures."""
from __future__ import annotations

import pytest

from tpscalc.catalog.store import models

# Epoch AI's parameter figures; the catalog's counts come from the architecture's tensors.
EXPECTED = {
    "Multilingual-E5-large": ("encoder", 0.56e9, 0.01),
    "bge-reranker-large": ("encoder", 0.56e9, 0.01),
    "gte-modernbert": ("encoder", 0.149e9, 0.01),
    "GTE-ModernColBERT-v1": ("encoder", 0.149e9, 0.01),
    "RWKV-6 (Finch) 3B": ("decoder", 3.1e9, 0.005),
    "RWKV-5 (Eagle) 7B": ("decoder", 7.52e9, 0.001),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_non_decoder_models_have_architectures(name: str) -> None:
    kind, params, tol = EXPECTED[name]
    model = next(m for m in models() if m.name == name)
    assert model.architecture is not None
    assert model.architecture.kind == kind
    assert model.parameters_total == pytest.approx(params, rel=tol)


def test_rwkv_models_are_all_recurrent() -> None:
    model = next(m for m in models() if m.name == "RWKV-6 (Finch) 3B")
    arch = model.architecture
    assert arch is not None and arch.linear_attention_layers == arch.num_layers
