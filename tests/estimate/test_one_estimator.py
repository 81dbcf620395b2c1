"""One estimator for every rig (issue 25): a single card and a one-device rig are one path.

The single card goes through the vectorised path; a one-device rig with its placement given
(`-ngl` every layer + the output, as the single card's own command runs it) goes through the
placement code. Both read the same model terms and the same per-device speed functions, so
they give the same answer, and the image encoder counts on every rig.
"""
from __future__ import annotations

import pytest

from tpscalc.catalog import get_card, get_model
from tpscalc.estimate import engine
from tpscalc.estimate.query import Query, Rig
from tpscalc.report.common import estimate_json


def _as_rig(card: str, model: str) -> Rig:
    m = get_model(model)
    assert m.architecture is not None
    return Rig((get_card(card),), n_gpu_layers=m.architecture.num_layers + 1)


@pytest.mark.parametrize(("card", "model", "quant"), [
    ("RTX 4090", "Llama 3.1-8B", "Q4_K_M"),       # dense
    ("RTX 3090", "Qwen3-30B-A3B", "Q4_K_M"),      # mixture of experts
    ("RTX 4090", "Cosmos-Reason1 7B", "Q4_K_M"),  # vision encoder
    ("Apple M4 Max (40-core GPU)", "Gemma 3 12B", "Q8_0"),  # unified memory, tied embeddings
])
def test_one_card_and_a_one_device_rig_give_the_same_answer(card: str, model: str,
                                                            quant: str) -> None:
    alone = engine.estimate(get_model(model), Rig.of(get_card(card)), Query(), quant)
    as_rig = engine.estimate(get_model(model), _as_rig(card, model), Query(), quant)
    assert alone.fits and as_rig.fits
    assert estimate_json(alone) == estimate_json(as_rig)


def test_the_encoder_counts_on_two_cards_and_text_only_drops_it() -> None:
    model, card = get_model("Cosmos-Reason1 7B"), get_card("RTX 4090")
    one = engine.estimate(model, Rig.of(card), Query(), "Q4_K_M")
    two = engine.estimate(model, Rig((card, card)), Query(), "Q4_K_M")
    text = engine.estimate(model, Rig((card, card)), Query(text_only=True), "Q4_K_M")
    assert one.memory.vision_gib == pytest.approx(1.56, abs=0.01)
    assert two.memory.vision_gib == one.memory.vision_gib
    # the second card adds its own compute buffer; the encoder sits on the first
    assert two.memory.total_gib == pytest.approx(
        one.memory.total_gib + one.memory.runtime_gib, abs=0.01)
    assert two.placement is not None
    first, second = two.placement.devices
    assert first.buffer_bytes - second.buffer_bytes == pytest.approx(
        one.memory.vision_gib * 2**30)
    assert text.memory.vision_gib == 0.0
    assert text.memory.total_gib == pytest.approx(two.memory.total_gib - two.memory.vision_gib)
