"""The engine facade: quantization choice, fit, vectorised evaluation, input errors.

Cards here are synthetic (only memory, bandwidth and TFLOPS matter to the engine); models come
from the committed catalog so the architecture join is exercised too.
"""
from __future__ import annotations

from dataclasses import replace

import pytest

from tpscalc.catalog import get_model
from tpscalc.catalog.quants import quantizations
from tpscalc.catalog.schema import Card
from tpscalc.catalog.slug import slugify
from tpscalc.estimate import engine
from tpscalc.estimate.query import EstimateInputError, Query, Rig

LADDER = [q.name for q in quantizations()]


# The engine takes a checked Query and a Rig; these keep the tests' calls short.
def estimate(model: object, c: Card, quant: str | None = None, **query: object) -> object:
    return engine.estimate(model, Rig.of(c), Query(**query), quant)  # type: ignore[arg-type]


def estimate_on_cards(model: object, cards: list[Card], **query: object) -> list[object]:
    return engine.estimate_on_rigs(model, [Rig.of(c) for c in cards],  # type: ignore[arg-type]
                                   Query(**query))  # type: ignore[arg-type]


def estimate_models_on_card(models: list[object], c: Card, **query: object) -> list[object]:
    return engine.estimate_models_on_rig(models, Rig.of(c), Query(**query))  # type: ignore[arg-type]


def memory_at(model: object, quant: str, context: int, **query: object) -> object:
    return engine.memory_at(model, quant, Query(context=context, **query))  # type: ignore[arg-type]


def card(name: str, memory_gib: float, bandwidth_gb_s: float = 1000.0, **kw: object) -> Card:
    """A synthetic NVIDIA card."""
    slug = slugify(name)
    return Card(name=name, slug=slug, vendor=kw.pop("vendor", "NVIDIA"), memory_gib=memory_gib,
                bandwidth_gb_s=bandwidth_gb_s, tflops_fp16_dense=100.0, **kw)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def llama2() -> object:
    return get_model("Llama 2-7B")


def test_llama2_q4_k_m_memory_hand_worked(llama2: object) -> None:
    # Weights: llama-bench printed 3.80 GiB for Llama 2-7B Q4_K_M
    # (measured/llamacpp_calibration.csv).
    # KV: 2 × 32 layers × 32 KV heads × 128 × 2 B × 4096 tokens = 2 GiB exactly.
    # Runtime: logits 32000 × 512 × 4 B + FFN 512 × 2 × 11008 × 4 B + CUDA's 457 MiB (ollama).
    m = memory_at(llama2, "Q4_K_M", 4096)  # type: ignore[arg-type]
    assert m.weights_gib == pytest.approx(3.80, rel=0.02)
    assert m.kv_cache_gib == pytest.approx(2.0, rel=1e-9)
    runtime = (32000 * 512 * 4 + 512 * 2 * 11008 * 4 + 457 * 2**20) / 2**30
    assert m.runtime_gib == pytest.approx(runtime, rel=1e-6)
    assert m.total_gib == pytest.approx(m.weights_gib + m.kv_cache_gib + m.runtime_gib)
    assert not m.approximated


def test_choice_is_least_compressed_that_fits(llama2: object) -> None:
    totals = {q: memory_at(llama2, q, 4096).total_gib for q in LADDER}  # type: ignore[arg-type]
    for mem_gib in (4.0, 6.0, 7.0, 9.0, 12.0, 24.0):
        est = estimate(llama2, card(f"T {mem_gib}", mem_gib))  # type: ignore[arg-type]
        fitting = [q for q in LADDER if totals[q] <= mem_gib]
        assert est.quant == (fitting[0] if fitting else None)
        assert est.fits == bool(fitting)


def test_q8_on_24_gib_is_comfortable_and_on_exact_size_is_tight(llama2: object) -> None:
    big = estimate(llama2, card("Big", 24.0))  # type: ignore[arg-type]
    assert (big.quant, big.fit) == ("Q8_0", "comfortable")
    need = memory_at(llama2, "Q8_0", 4096).total_gib  # type: ignore[arg-type]
    snug = estimate(llama2, card("Snug", need + 0.01))  # type: ignore[arg-type]
    assert (snug.quant, snug.fit) == ("Q8_0", "tight")


def test_quality_floor_hides_cards_that_only_fit_below_it(llama2: object) -> None:
    small = card("Small", 6.0)
    est = estimate(llama2, small, min_quality="Q8_0")  # type: ignore[arg-type]
    need = memory_at(llama2, "Q8_0", 4096).total_gib  # type: ignore[arg-type]
    assert est.quant is None and est.fit == "no"
    assert est.short_by_gib == pytest.approx(need - 6.0, abs=0.01)


def test_vectorised_equals_one_by_one(llama2: object) -> None:
    cards = [card(f"C{i}", m, bw) for i, (m, bw) in
             enumerate([(4, 200), (8, 450), (12, 360), (16, 500), (24, 1000), (80, 3350)])]
    many = estimate_on_cards(llama2, cards, context=8192)  # type: ignore[arg-type]
    for c, e in zip(cards, many):
        one = estimate(llama2, c, context=8192)  # type: ignore[arg-type]
        # one estimate also carries the placement that realises it; a report row does not
        assert replace(one, placement=None, offload_share=None, run=None) == e
    speeds = [e.decode.tokens_per_s for e in many if e.decode and e.quant == "Q8_0"]
    assert speeds == sorted(speeds)  # same quant: faster memory, faster decode


def test_unified_memory_uses_the_gpu_share(llama2: object) -> None:
    mac = card("Mac", 8.0, 100.0, vendor="Apple", unified_memory=True, gpu_memory_fraction=0.75)
    est = estimate(llama2, mac)  # type: ignore[arg-type]
    assert est.usable_gib == pytest.approx(6.0)
    assert est.backend == "metal"


def test_longer_context_needs_more_memory_and_is_slower(llama2: object) -> None:
    c = card("C", 80.0, 2000.0)
    short, long = (estimate(llama2, c, quant="Q4_K_M", context=n) for n in (2048, 32768))  # type: ignore[arg-type]
    assert long.memory.kv_cache_gib == pytest.approx(16 * short.memory.kv_cache_gib)
    assert long.decode.tokens_per_s < short.decode.tokens_per_s  # type: ignore[union-attr]


def test_models_on_card_keeps_order() -> None:
    models = [get_model("Llama 2-7B"), get_model("StarCoder 2 15B")]
    out = estimate_models_on_card(models, card("C", 24.0))
    assert [e.model for e in out] == [m.name for m in models]


@pytest.mark.parametrize("context", [0, -1, 10_000_001])
def test_bad_context_is_an_input_error(llama2: object, context: int) -> None:
    with pytest.raises(EstimateInputError, match="context"):
        estimate(llama2, card("C", 24.0), context=context)  # type: ignore[arg-type]


def test_unknown_quant_lists_valid_names(llama2: object) -> None:
    with pytest.raises(EstimateInputError, match="Q4_K_M"):
        estimate(llama2, card("C", 24.0), quant="Q4_K_Z")  # type: ignore[arg-type]


def test_approximated_models_get_low_confidence() -> None:
    """A model with no architecture is estimated from guesses: never more than low confidence."""
    from tpscalc.catalog import store

    model = next(m for m in store.models()
                 if m.architecture is None and 1e9 < m.parameters < 1.3e10)
    rtx = get_card_named("GeForce RTX 4090")
    est = estimate(model, rtx)
    assert est.memory.approximated
    assert est.decode is not None and est.decode.confidence == "low"
    known = estimate(get_model("Llama 2-7B"), rtx)
    assert known.decode is not None and known.decode.confidence != "low"


def get_card_named(name: str) -> Card:
    from tpscalc.catalog import get_card

    return get_card(name)


def test_q8_0_kv_cache_is_34_32nds_of_half_f16(llama2: object) -> None:
    """q8_0 stores 32 values in 34 bytes (GGML_QUANT_SIZES); f16 stores each in 2."""
    f16 = memory_at(llama2, "Q4_K_M", 8192)  # type: ignore[arg-type]
    q8 = memory_at(llama2, "Q4_K_M", 8192, kv_type="q8_0")  # type: ignore[arg-type]
    assert q8.kv_cache_gib == pytest.approx(f16.kv_cache_gib * (34 / 32) / 2)


@pytest.mark.parametrize("bad", [{"kv_type": "q5_1"}, {"backend": "cpu"}, {"backend": "cudaa"}])
def test_unknown_kv_type_or_backend_is_an_input_error(llama2: object, bad: dict[str, str]) -> None:
    with pytest.raises(EstimateInputError):
        estimate(llama2, card("C", 24.0), **bad)  # type: ignore[arg-type]


def test_a_guessed_models_range_holds_the_low_band_and_never_narrows() -> None:
    """low_confidence widens a range to the low band; one already wider (a condition's or a
    device class's band) keeps its width: a guess about the model knows no more about the card."""
    from dataclasses import replace

    from tpscalc.estimate.answer import low_confidence
    from tpscalc.estimate.calibration import Band
    from tpscalc.estimate.calibration_store import calibration
    from tpscalc.estimate.types import DecodeEstimate

    cal = replace(calibration(), decode_bands={"low": Band(0.75, 1.25, 10)})
    narrow = low_confidence(DecodeEstimate(100.0, 95.0, 105.0, "high", "bandwidth"), cal)
    assert (narrow.low, narrow.high, narrow.confidence) == (75.0, 125.0, "low")
    wide = low_confidence(DecodeEstimate(100.0, 35.0, 157.0, "medium", "bandwidth"), cal)
    assert (wide.low, wide.high, wide.confidence) == (35.0, 157.0, "low")


@pytest.mark.parametrize(("model", "wmma"), [("gpt-oss-20b", True), ("Llama 2-7B", False)])
def test_the_engine_gives_the_speed_model_the_models_attention_shape(
        model: str, wmma: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """A deep prompt on ROCm is timed with the model's own attention shape (ROCm's WMMA kernel
    takes gpt-oss's 64-wide GQA heads, not Llama 2's MHA; speed_terms.wmma_attention_shape),
    on one card and on a rig of two."""
    from tpscalc.catalog import get_card
    from tpscalc.estimate import speed

    seen: list[object] = []
    real = speed.prefill_estimates

    def spy(*args: object, **kw: object) -> object:
        seen.append(kw.get("wmma_attention"))
        return real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(speed, "prefill_estimates", spy)
    r9700 = get_card("Radeon AI PRO R9700")
    m = get_model(model)
    e = engine.estimate(m, Rig.of(r9700), Query(backend="rocm", depth=32768))
    assert e.prefill is not None
    two = engine.estimate(m, Rig((r9700, r9700)), Query(backend="rocm", depth=32768))
    assert two.prefill is not None
    flags = [f if isinstance(f, bool) else list(f) for f in seen]  # type: ignore[call-overload]
    assert flags and all(f in (wmma, [wmma], [wmma, wmma]) for f in flags)
