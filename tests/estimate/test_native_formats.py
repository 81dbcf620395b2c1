"""Models that ship quantized are offered in their native format first (`Runtime.native_format`,
`LlamaCpp.formats`)."""
from __future__ import annotations

import pytest

from tpscalc.catalog import get_card, get_model
from tpscalc.estimate import engine
from tpscalc.estimate.query import Query, Rig
from tpscalc.estimate.runtime import LLAMA_CPP

GIB = 2**30


@pytest.mark.parametrize("name", ["gpt-oss-120b", "gpt-oss-20b"])
def test_gpt_oss_tops_its_ladder_with_mxfp4(name: str) -> None:
    model = get_model(name)
    formats = LLAMA_CPP.formats(model)
    assert LLAMA_CPP.native_format(model) == formats[0] == "MXFP4_MOE"
    native = LLAMA_CPP.weights_bytes(model, "MXFP4_MOE")[0]
    assert all(LLAMA_CPP.weights_bytes(model, q)[0] < native for q in formats[1:])


def test_gpt_oss_120b_weighs_what_ggml_org_ships() -> None:
    """ggml-org/gpt-oss-120b-GGUF (MXFP4 experts, the rest Q8_0/F32): 59.0 GiB of weights."""
    e = engine.estimate(get_model("gpt-oss-120b"), Rig.of(get_card("H100 SXM5 80 GB")), Query())
    assert e.quant == "MXFP4_MOE" and e.fits
    assert e.memory.weights_gib == pytest.approx(59.0, rel=0.02)


def test_a_model_without_one_keeps_the_ladder() -> None:
    model = get_model("Llama 3-8B")
    assert LLAMA_CPP.native_format(model) is None and LLAMA_CPP.formats(model)[0] == "Q8_0"


def test_the_card_report_mixes_ladders() -> None:
    """Models with and without a native format on one card, in the order asked."""
    models = [get_model("Llama 3-8B"), get_model("gpt-oss-20b"), get_model("Llama 2-7B")]
    found = engine.estimate_models_on_rig(models, Rig.of(get_card("RTX 4090")), Query())
    assert [e.model for e in found] == [m.name for m in models]
    assert [e.quant for e in found] == ["Q8_0", "MXFP4_MOE", "Q8_0"]


def test_a_ceiling_below_the_native_format_leaves_it_out() -> None:
    e = engine.estimate(get_model("gpt-oss-20b"), Rig.of(get_card("RTX 4090")),
                        Query(max_quality="Q4_K_M"))
    assert e.quant != "MXFP4_MOE"


def test_the_model_page_says_native_format() -> None:
    from tpscalc import api

    report = api.model_report("gpt-oss-120b", search="H100 SXM5")
    assert any("native format" in note and "MXFP4_MOE" in note for note in report.notes)


@pytest.mark.parametrize("ceiling", ["F16", "BF16"])
def test_a_ceiling_above_the_ladder_lets_the_unquantized_weights_in(ceiling: str) -> None:
    rig, model = Rig.of(get_card("RTX 4090")), get_model("Llama 2-7B")
    assert engine.estimate(model, rig, Query()).quant == "Q8_0"  # the ladder tops at Q8_0
    assert engine.estimate(model, rig, Query(max_quality=ceiling)).quant == ceiling


def test_f16_is_a_ceiling_not_a_floor() -> None:
    from tpscalc.estimate.query import EstimateInputError

    with pytest.raises(EstimateInputError):
        Query(min_quality="F16")
