"""A fake engine with hand-workable numbers, and a small catalog, for report and CLI tests.

Weights are parameters × bits / 8 bytes; the KV cache is 1 GiB per 4096 tokens; runtime 0.5 GiB;
decode tok/s = bandwidth (GB/s) / weights (GB). Fit is comfortable under 80 % of the memory.
"""
from __future__ import annotations

from collections.abc import Sequence

from tpscalc.catalog.schema import Card, Model
from tpscalc.estimate.query import EstimateInputError, Query, Rig
from tpscalc.estimate.types import DecodeEstimate, Estimate, MemoryBreakdown, PrefillEstimate

GIB = 2**30
LADDER = (("Q8_0", 8.0), ("Q4_K_M", 4.0), ("Q2_K", 2.0))


def memory_at(model: Model, quant: str, query: Query | int) -> MemoryBreakdown:
    context = query if isinstance(query, int) else query.context
    if quant not in dict(LADDER):
        raise EstimateInputError(f"unknown quantization {quant!r}")
    weights = model.parameters_total * dict(LADDER)[quant] / 8 / GIB
    kv = context / 4096
    return MemoryBreakdown(weights, kv, 0.5, weights + kv + 0.5, model.architecture is None)


def estimate(model: Model, rig: Rig, query: Query, quant: str | None = None, *,
             placed: bool = True) -> Estimate:
    card, context, backend, min_quality = (rig.single_device, query.context, query.backend,
                                           query.min_quality)
    names = [q for q, _ in LADDER]
    # A floor off this three-rung ladder (the real default IQ4_XS) leaves every rung: the fake
    # ladder stands for the rungs a default report offers.
    floor = names.index(min_quality) + 1 if min_quality in names else len(names)
    candidates = [quant] if quant else names[:floor]
    chosen = next((q for q in candidates
                   if memory_at(model, q, context).total_gib <= card.memory_gib), None)
    mem = memory_at(model, chosen or candidates[-1], context)
    be = backend or "cuda"
    if chosen is None:
        return Estimate(model.name, card.name, None, context, be, mem, card.memory_gib, False,
                        "no", None, None, mem.total_gib - card.memory_gib)
    tps = card.bandwidth_gb_s / (mem.weights_gib * GIB / 1e9)
    decode = DecodeEstimate(tps, tps * 0.6, tps * 1.6, "low", "bandwidth")
    prefill = PrefillEstimate(1000.0, 700.0, 1400.0, 0.512, "compute")
    fit = "comfortable" if mem.total_gib <= 0.8 * card.memory_gib else "tight"
    return Estimate(model.name, card.name, chosen, context, be, mem, card.memory_gib, True, fit,
                    decode, prefill)


def estimate_on_rigs(model: Model, rigs: Sequence[Rig], query: Query) -> list[Estimate]:
    return [estimate(model, r, query) for r in rigs]


def estimate_models_on_rig(models: Sequence[Model], rig: Rig, query: Query) -> list[Estimate]:
    return [estimate(m, rig, query) for m in models]


def compare_runtimes(model: Model, rig: Rig, query: Query) -> list[Estimate]:
    """The fake engine knows one runtime: the query's."""
    return [estimate(model, rig, query)]


class FakeEngine:
    """The fake engine, passed to the report builders where the real one would be."""

    estimate = staticmethod(estimate)
    estimate_on_rigs = staticmethod(estimate_on_rigs)
    estimate_models_on_rig = staticmethod(estimate_models_on_rig)
    memory_at = staticmethod(memory_at)
    compare_runtimes = staticmethod(compare_runtimes)


ENGINE = FakeEngine()


def card(name: str, memory_gib: float, bandwidth_gb_s: float, date: str) -> Card:
    from tpscalc.catalog.slug import slugify

    return Card(name=name, slug=slugify(name), vendor="NVIDIA", memory_gib=memory_gib,
                bandwidth_gb_s=bandwidth_gb_s, release_date=date)


# Hand-worked for an 8e9-parameter model at 4096 tokens: needs 8.95 GiB at Q8_0, 5.23 at Q4_K_M,
# 3.36 at Q2_K; tok/s = bandwidth / 8, / 4, / 2 GB.
CARDS = (
    card("Alpha 24", 24, 1000, "2022-10-12"),   # Q8_0, 125 tok/s
    card("Beta 24", 24, 1000, "2020-09-01"),    # Q8_0, 125 tok/s (older: after Alpha)
    card("Gamma 6", 6, 400, "2019-01-01"),      # Q4_K_M, 100 tok/s
    card("Delta 4", 4, 200, "2021-01-01"),      # Q2_K, 100 tok/s (newer: before Gamma)
    card("Epsilon 2", 2, 100, "2017-01-01"),    # short by 3.36 - 2 = 1.36 GiB
    card("Zeta 12", 12, 300, "2023-01-01"),     # Q8_0, 37.5 tok/s
    card("Eta 16", 16, 50, "2018-01-01"),       # Q8_0, 6.25 tok/s (below reading speed)
)

MODEL = Model(
    name="Test Coder 8B", slug="test-coder-8b", parameters=8e9, organization=("Acme", "Lab"),
    publication_date="2024-02-29", hf_repo="acme/test-coder-8b",
    record={"domain": ["Language"], "task": ["Code generation", "Code autocompletion"],
            "training_compute_flop": 3.87e23,
            "model_accessibility": "Open weights (restricted use)",
            "organization": ["Acme", "Lab"], "open_model_weights": True,
            "country_of_organization": ["United States of America", "United States of America"],
            "reference": "Test Coder paper", "confidence": "Confident"})

SMALL_MODEL = Model(name="Tiny 1B", slug="tiny-1b", parameters=1e9, publication_date="2023-05-01")
BIG_MODEL = Model(name="Huge 70B", slug="huge-70b", parameters=70e9, publication_date="2024-07-01")
MODELS = (MODEL, SMALL_MODEL, BIG_MODEL)
