"""The quantization ladder (catalog/data/quants.json) and name resolution."""
from __future__ import annotations

import pytest

from tpscalc.catalog import get_model
from tpscalc.catalog.quants import (
    UnknownQuantizationError,
    all_quantizations,
    get_quant,
    is_on_ladder,
    ladder_name,
    ladder_names,
    quantizations,
)
from tpscalc.estimate.weights import average_bits_per_weight, canonical_ftype

# F16 perplexity of LLaMA 3 8B on wikitext-2 in llama.cpp's tools/perplexity/README.md
# scoreboard: q8_0's 6.234284 minus its ΔPPL 0.002650.
F16_PPL = 6.231636


def test_ladder_least_compressed_first() -> None:
    ladder = quantizations()
    assert [q.quality_rank for q in ladder] == list(range(len(ladder)))
    assert ladder[0].name == "Q8_0"
    bits = [q.bits_per_weight for q in ladder]
    assert bits == sorted(bits, reverse=True)


def test_ladder_perplexity_grows_with_compression() -> None:
    ppl = [q.ppl_increase_pct for q in quantizations()]
    assert all(p is not None for p in ppl)
    assert ppl == sorted(ppl)  # type: ignore[type-var]


def test_q4_k_m_perplexity_from_the_scoreboard() -> None:
    q = get_quant("Q4_K_M")
    assert q.ppl_increase_pct == pytest.approx(100 * 0.151303 / F16_PPL, abs=1e-3)
    assert q.ppl_source and "perplexity/README.md" in q.ppl_source


def test_extras_ranked_by_the_first_rung_they_match() -> None:
    """An extra type's rank is the first ladder rung whose perplexity increase is ≥ its own."""
    ladder = quantizations()
    for q in all_quantizations()[len(ladder):]:
        if q.ppl_increase_pct is None:
            continue
        worse = [r.quality_rank for r in ladder if (r.ppl_increase_pct or 0) >= q.ppl_increase_pct]
        assert q.quality_rank == (worse[0] if worse else len(ladder)), q.name


@pytest.mark.parametrize("name", ["F16", "BF16", "Q4_0", "Q8_0", "MXFP4_MOE"])
def test_measured_types_are_computable(name: str) -> None:
    assert canonical_ftype(get_quant(name).name) == name


def test_every_entry_is_a_llama_cpp_file_type() -> None:
    for q in all_quantizations():
        assert canonical_ftype(q.name) == q.name


@pytest.mark.parametrize(("model", "names"), [
    ("Llama 3-8B", [q.name for q in all_quantizations() if q.name != "MXFP4_MOE"]),
    ("gpt-oss-20b", ["MXFP4_MOE"]),
])
def test_bits_per_weight_match_the_weights_engine(model: str, names: list[str]) -> None:
    """quants.json's average bits are weights.py's mix averaged over the reference model."""
    arch = get_model(model).architecture
    if arch is None:
        pytest.skip(f"{model} has no architecture in the catalog")
    for name in names:
        assert get_quant(name).bits_per_weight == pytest.approx(
            average_bits_per_weight(arch, name), abs=0.01), name


@pytest.mark.parametrize(("given", "expected"), [
    ("q4_k_m", "Q4_K_M"), ("Q4_K_M", "Q4_K_M"), ("q4km", "Q4_K_M"), ("Q4_K", "Q4_K_M"),
    ("Q4_K - Medium", "Q4_K_M"), ("Q3_K - Small", "Q3_K_S"), ("Q2_K - Medium", "Q2_K"),
    ("IQ3_XXS - 3.0625 bpw", "IQ3_XXS"), ("MXFP4 MoE", "MXFP4_MOE"), ("mxfp4", "MXFP4_MOE"),
    ("fp16", "F16"), ("bf16", "BF16"),
])
def test_get_quant_spellings(given: str, expected: str) -> None:
    assert get_quant(given).name == expected


def test_unknown_quant_lists_closest() -> None:
    with pytest.raises(UnknownQuantizationError) as err:
        get_quant("q4_k_x")
    assert isinstance(err.value, ValueError)
    assert "Q4_K_M" in err.value.suggestions
    assert "Q4_K_M" in str(err.value)


def test_ladder_membership() -> None:
    assert is_on_ladder("q4_k_m")
    assert not is_on_ladder("F16")


def test_ladder_name_spells_canonically_and_refuses_off_ladder_types() -> None:
    assert ladder_names()[0] == "Q8_0" and "Q4_K_M" in ladder_names()
    assert ladder_name("q4km") == ladder_name("Q4_K - Medium") == "Q4_K_M"
    with pytest.raises(UnknownQuantizationError, match="not on the ladder; use one of Q8_0"):
        ladder_name("F16")  # a real file type, not offered in the tables
    with pytest.raises(UnknownQuantizationError, match="unknown quantization"):
        ladder_name("Q9_X")


def test_ladder_name_against_another_ladder() -> None:
    ladder = ["Q8_0", "Q4_K_M", "Q2_K"]
    assert ladder_name("q2_k", ladder) == "Q2_K"
    with pytest.raises(UnknownQuantizationError) as err:
        ladder_name("IQ4_XS", ladder)
    assert "Q4_K_M" in err.value.suggestions and "not on the ladder" in str(err.value)


@pytest.mark.parametrize("name", ["UD-Q4_K_XL", "ud_q8_k_xl", "Q4_K_XL", "Q2_K_L"])
def test_a_file_makers_own_mix_points_to_the_file_reader(name: str) -> None:
    with pytest.raises(UnknownQuantizationError, match="own mix .* estimated from its tensors"):
        get_quant(name)


@pytest.mark.parametrize("name", ["Q9_X", "Q4_KX", "IQ9_NL"])
def test_an_unknown_name_that_is_no_makers_mix_gets_no_such_pointer(name: str) -> None:
    with pytest.raises(UnknownQuantizationError) as err:
        get_quant(name)
    assert "own mix" not in str(err.value)
