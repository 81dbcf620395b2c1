"""Batched decode (estimate/batched.py, serving.py): N = 1 is the single estimate exactly,
aggregate rises and per-user speed falls with N, MoE experts touched, N sequences' KV."""
from __future__ import annotations

import math

import pytest

from tpscalc.catalog import get_card, get_model
from tpscalc.catalog.schema import Model
from tpscalc.estimate import engine, speed
from tpscalc.estimate.batched import (
    DecodeParts,
    batched_decode,
    distinct_experts,
    expert_read_factor,
    max_users,
    sequences_kv_bytes,
    step_seconds,
)
from tpscalc.estimate.calibration_store import calibration
from tpscalc.estimate.model_terms import ModelTerms
from tpscalc.estimate.query import EstimateInputError, Query, Rig, query_for_model
from tpscalc.estimate.serving import decode_parts, serving_estimate
from tpscalc.estimate.types import DecodeEstimate

PAIRS = [("Llama 3.1-8B", "H100 SXM5 80 GB"), ("Qwen3.6-27B", "4090"),
         ("gpt-oss-120b", "H100 SXM5 80 GB"), ("Llama 3.1-8B", "M4 Max (40-core GPU)")]


def _rig_query(model: str, card: str) -> tuple[object, Rig, Query]:
    m = get_model(model)
    return m, Rig.of(get_card(card)), query_for_model(m, Query())


@pytest.mark.parametrize(("model", "card"), PAIRS)
def test_one_sequence_is_the_single_estimate_exactly(model: str, card: str) -> None:
    m, rig, q = _rig_query(model, card)
    single = engine.estimate(m, rig, q)  # type: ignore[arg-type]
    s = serving_estimate(m, rig, q, 1)  # type: ignore[arg-type]
    assert single.decode is not None and s.decode is not None and single.prefill is not None
    assert s.decode.per_user_tokens_per_s == single.decode.tokens_per_s
    assert s.decode.aggregate_tokens_per_s == single.decode.tokens_per_s
    assert (s.decode.per_user_low, s.decode.per_user_high) == (single.decode.low,
                                                               single.decode.high)
    assert s.time_to_first_token_s == single.prefill.time_to_first_token_s
    assert s.kv_cache_gib == pytest.approx(single.memory.kv_cache_gib)
    assert s.total_gib == pytest.approx(single.memory.total_gib)


@pytest.mark.parametrize(("model", "card"), PAIRS)
def test_parts_sum_to_the_single_decode_time(model: str, card: str) -> None:
    """The split of the single-request time is the same formula as speed.decode_estimates."""
    m, rig, q = _rig_query(model, card)
    e = engine.estimate(m, rig, q, placed=False)  # type: ignore[arg-type]
    assert e.quant is not None and e.decode is not None
    t = engine.model_terms_at(m, e.quant, q)  # type: ignore[arg-type]
    parts = decode_parts(rig.devices[0], None, calibration(), t, e.quant, m)  # type: ignore[arg-type]
    if e.decode.confidence == "low" or e.decode.measured is not None:
        pytest.skip("band or measurement beside the formula")
    assert 1.0 / parts.single_s == pytest.approx(e.decode.tokens_per_s, rel=1e-9)


def test_vulkans_bf16_expert_tiles_are_in_the_parts_and_grow_with_n() -> None:
    """Qwen3.6-35B-A3B BF16 on the Strix Halo under Vulkan: the parts still sum to the single
    decode (the experts' 32-column tiles ride with the weights' dequantization work), and that
    work is what makes it slower than the same parts without it."""
    from dataclasses import replace

    m, t, parts = _parts_of_the_single_decode("Qwen3.6-35B-A3B", "Ryzen AI Max+ 395", "vulkan",
                                              "BF16")
    plain = decode_parts(get_card("Ryzen AI Max+ 395"), "vulkan", calibration(),
                         replace(t, expert_params=0.0), "BF16", m)
    assert parts.dequant_s > 2 * plain.dequant_s  # the tiles, beside the dequantization work
    assert step_seconds(parts, 8) > step_seconds(plain, 8)


def test_aggregate_rises_and_per_user_falls_with_n() -> None:
    m, rig, q = _rig_query("Llama 3.1-8B", "H100 SXM5 80 GB")
    runs = [serving_estimate(m, rig, q, n) for n in (1, 2, 8, 32)]  # type: ignore[arg-type]
    agg = [r.decode.aggregate_tokens_per_s for r in runs if r.decode]
    per = [r.decode.per_user_tokens_per_s for r in runs if r.decode]
    assert agg == sorted(agg) and per == sorted(per, reverse=True)
    assert agg[-1] > 5 * agg[0]  # the weights are read once for 32 tokens
    ttft = [r.time_to_first_token_s or 0.0 for r in runs]
    assert ttft == sorted(ttft) and ttft[-1] > ttft[0]
    assert runs[-1].kv_cache_gib == pytest.approx(32 * runs[0].kv_cache_gib)


PARTS = DecodeParts(weights_s=0.010, kv_s=0.001, overhead_s=0.001, dequant_s=0.0,
                    attention_s=0.0, gemm_s=0.0005)


def test_compute_becomes_the_limit() -> None:
    assert batched_decode(DecodeEstimate(80.0, 70.0, 90.0, "high", "bandwidth"), PARTS,
                          4).bound == "bandwidth"
    # 64 tokens × 0.5 ms of matrix work > 10 ms of weights
    assert batched_decode(DecodeEstimate(80.0, 70.0, 90.0, "high", "bandwidth"), PARTS,
                          64).bound == "compute"
    assert step_seconds(PARTS, 64) == pytest.approx(0.001 + 64 * 0.0005 + 64 * 0.001)


@pytest.mark.parametrize(("n", "expected"), [(1, 8.0), (2, 128 * (1 - (120 / 128) ** 2)),
                                             (1000, 128.0)])
def test_distinct_experts(n: int, expected: float) -> None:
    assert distinct_experts(128, 8, n) == pytest.approx(expected, rel=1e-6)


def test_moe_reads_more_experts_with_more_tokens() -> None:
    moe = DecodeParts(0.01, 0.001, 0.001, 0.0, 0.0, 0.0, expert_share=0.9, n_experts=128,
                      n_experts_active=4)
    assert expert_read_factor(moe, 1) == pytest.approx(1.0)
    assert expert_read_factor(moe, 8) > 5  # ~ 0.1 + 0.9 × 30 / 4
    assert expert_read_factor(moe, 10_000) == pytest.approx(0.1 + 0.9 * 32)  # every expert


def test_max_users_stops_at_the_target_or_the_memory() -> None:
    single = DecodeEstimate(80.0, 70.0, 90.0, "high", "bandwidth")
    n, limit = max_users(single, PARTS, 20.0, 1000)
    assert limit == "speed"
    assert batched_decode(single, PARTS, n).per_user_tokens_per_s >= 20.0
    assert batched_decode(single, PARTS, n + 1).per_user_tokens_per_s < 20.0
    assert max_users(single, PARTS, 20.0, 3) == (3, "memory")
    assert max_users(single, PARTS, 100.0, 1000) == (0, "speed")


def test_paged_kv_rounds_up_to_blocks() -> None:
    assert sequences_kv_bytes(1000.0, 4, 100) == 4000.0
    assert sequences_kv_bytes(1000.0, 4, 100, block_tokens=16) == pytest.approx(
        4000.0 * 112 / 100)


def test_users_at_walks_down_to_the_quant_that_serves_most() -> None:
    m, rig, q = _rig_query("Qwen3.6-27B", "4090")
    s = serving_estimate(m, rig, q, 1, users_at=20.0)  # type: ignore[arg-type]
    assert s.users is not None and s.users > 1 and s.users_decode is not None
    assert s.users_decode.per_user_tokens_per_s >= 20.0
    one_more = serving_estimate(m, rig, q, s.users + 1, quant=s.users_quant)  # type: ignore[arg-type]
    assert (not one_more.fits or one_more.decode is None
            or one_more.decode.per_user_tokens_per_s < 20.0)


def test_too_many_users_do_not_fit() -> None:
    m, rig, q = _rig_query("Llama 3.1-8B", "4090")
    s = serving_estimate(m, rig, replace_context(q, 131072), 64)  # type: ignore[arg-type]
    assert not s.fits and s.decode is None and s.total_gib > s.usable_gib


def replace_context(q: Query, context: int) -> Query:
    from dataclasses import replace

    return replace(q, context=context)


def test_parallel_out_of_range_is_refused() -> None:
    m, rig, q = _rig_query("Llama 3.1-8B", "4090")
    with pytest.raises(EstimateInputError):
        serving_estimate(m, rig, q, 0)  # type: ignore[arg-type]
    assert math.isfinite(serving_estimate(m, rig, q, 2).total_gib)  # type: ignore[arg-type]


def test_sycls_unreordered_types_are_in_the_parts() -> None:
    """Llama 3.1-8B IQ4_XS on an Arc B580 under SYCL: the parts still sum to the single decode,
    whose weights read at the unreordered kernels' rate (sycl_kernels)."""
    _, t, parts = _parts_of_the_single_decode("Llama 3.1-8B", "Arc B580", "sycl", "IQ4_XS")
    card = get_card("Arc B580")
    own = speed.card_terms(card, "sycl", calibration()).params.decode_efficiency
    plain_s = speed.memory_seconds(t.read_per_token[0], card.bandwidth_gb_s, own)
    assert parts.weights_s > 1.5 * plain_s > 0


def _parts_of_the_single_decode(model: str, card: str, backend: str, quant: str,
                                ) -> tuple[Model, ModelTerms, DecodeParts]:
    """(model, terms, decode_parts) of `model` at `quant` on `card` under `backend`, the parts
    checked to sum to the engine's single decode."""
    m = get_model(model)
    rig, q = Rig.of(get_card(card)), query_for_model(m, Query(backend=backend))
    e = engine.estimate(m, rig, q, quant, placed=False)
    assert e.decode is not None
    t = engine.model_terms_at(m, quant, q)
    parts = decode_parts(rig.devices[0], backend, calibration(), t, quant, m)
    assert 1.0 / parts.single_s == pytest.approx(e.decode.tokens_per_s, rel=1e-9)
    return m, t, parts
