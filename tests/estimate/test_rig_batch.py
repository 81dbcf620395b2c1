"""The vectorised rig path gives the scalar one's numbers: placement_batch.place_many against
placement.place row by row, rig_batch.estimate_rigs against rig_engine.estimate_rig, on seeded
samples of catalog models, cards, card counts and RAM (equality, not a tolerance)."""
from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest

from tpscalc.catalog import get_model, store
from tpscalc.estimate import engine
from tpscalc.estimate.placement import DeviceSlot, ModelLayout, place
from tpscalc.estimate.placement_batch import place_many
from tpscalc.estimate.query import Query, Rig
from tpscalc.estimate.rig_batch import estimate_rigs
from tpscalc.estimate.rig_engine import _shared_layout, estimate_rig
from tpscalc.estimate.runtime import LLAMA_CPP

G = 2**30


def _random_layout(rnd: random.Random) -> ModelLayout:
    layer = rnd.uniform(0.01, 3) * G
    expert = layer * rnd.uniform(0.5, 0.97) if rnd.random() < 0.4 else 0.0
    return ModelLayout(rnd.randint(1, 90), layer, expert, rnd.uniform(0, 0.3) * G,
                       rnd.uniform(0, 2) * G, rnd.uniform(0, 2) * G,
                       rnd.choice([0.0, rnd.uniform(0, 1) * G]),
                       rnd.choice([0.0, rnd.uniform(0, 1) * G]))


def _catalog_layouts(rnd: random.Random, count: int) -> list[ModelLayout]:
    """Layouts of catalog models at their formats (the first, a middle one, the last)."""
    out = []
    for m in rnd.sample(store.models(), count):
        ladder = engine._ladder(m, Query())
        terms = engine._terms(m, ladder, Query())
        arch = m.architecture or engine.mem.approx_architecture(m.parameters_total)
        for j in {0, len(ladder) // 2, len(ladder) - 1}:
            out.append(_shared_layout(arch, terms, j, Query(), False).model)
    return out


@pytest.mark.parametrize("devices", [1, 2, 3, 4])
def test_place_many_is_place_on_every_row(devices: int) -> None:
    rnd = random.Random(devices)
    cards = [c for c in store.cards() if c.usable_memory_gib > 0]
    layouts = _catalog_layouts(rnd, 40) + [_random_layout(rnd) for _ in range(400)]
    rows = []
    for m in layouts:
        slots = [DeviceSlot(c.name, c.usable_memory_gib * G, rnd.uniform(0.1, 2) * G)
                 for c in rnd.choices(cards, k=devices)]
        rows.append((m, slots, rnd.choice([None, 4 * G, 16 * G, 64 * G, 512 * G])))
    placed = place_many([m for m, _, _ in rows],
                        np.array([[s.usable_bytes for s in slots] for _, slots, _ in rows]),
                        np.array([[s.buffer_bytes for s in slots] for _, slots, _ in rows]),
                        np.array([np.nan if r is None else r for _, _, r in rows]))
    kinds = set()
    for i, (m, slots, ram) in enumerate(rows):
        expected = place(m, slots, ram)
        assert placed.placement(i, [s.name for s in slots]) == expected, i
        kinds.add((expected.fits, expected.cpu_layers > 0, expected.cpu_expert_layers > 0))
    assert len(kinds) >= 4  # all on the GPUs, layers in RAM, experts in RAM, does not fit


@pytest.mark.parametrize(("gpus", "ram"), [(1, 24.0), (1, 64.0), (2, None), (2, 64.0),
                                           (3, 128.0)])
def test_estimate_rigs_is_estimate_rig_on_every_row(gpus: int, ram: float | None) -> None:
    rnd = random.Random(gpus * 1000 + int(ram or 0))
    query = Query()
    models = rnd.sample(store.models(), 25)
    cards = rnd.sample([c for c in store.cards() if c.usable_memory_gib > 0], 25)
    rows = []
    for m, c in zip(models, cards, strict=True):
        rows.append((m, engine._rig_terms(m, query, None), Rig((c,) * gpus, ram)))
    for m in models[:5]:  # one model on many rigs, as a model page asks
        for c in cards[:5]:
            rows.append((m, engine._rig_terms(m, query, None), Rig((c,) * gpus, ram)))
    batched = estimate_rigs(rows, query, LLAMA_CPP)
    fits = set()
    for (m, terms, rig), got in zip(rows, batched, strict=True):
        assert got == estimate_rig(m, terms, rig, query, LLAMA_CPP), (m.name, rig.name)
        fits.add(got.fit)
    assert "no" in fits or ram is not None
    assert len(fits) >= 2


def test_estimate_rigs_pages_where_estimate_rig_does() -> None:
    """A MoE whose experts overflow the usable RAM pages on both paths (the batch labels a
    placement that fails only for the RAM with rig_engine's own paging rule)."""
    query = Query()
    moe = [m for m in store.models() if m.parameters_active and m.parameters_total
           and 20e9 < m.parameters_total < 40e9 and m.parameters_active < 0.2 * m.parameters_total]
    cards = [c for c in store.cards() if 3.5 < c.usable_memory_gib < 8 and not c.unified_memory]
    rows = [(m, engine._rig_terms(m, query, None), Rig((c,), 16.0))
            for m in moe[:6] for c in cards[:4]]
    batched = estimate_rigs(rows, query, LLAMA_CPP)
    for (m, terms, rig), got in zip(rows, batched, strict=True):
        assert got == estimate_rig(m, terms, rig, query, LLAMA_CPP), (m.name, rig.name)
    assert "paging" in {e.fit for e in batched}


def test_a_renamed_placement_keeps_every_figure() -> None:
    """rig_batch gives rows alike their first row's placement on their own devices."""
    m = ModelLayout(40, 0.5 * G, 0.0, 0.1 * G, 0.2 * G, 0.3 * G, 0.0, 0.0)
    p = place(m, [DeviceSlot("A", 12 * G, G), DeviceSlot("B", 8 * G, G)], 64 * G)
    q = p.renamed(["C", "D"])
    assert [d.name for d in q.devices] == ["C", "D"]
    assert q == replace(p, devices=tuple(replace(d, name=n)
                                         for d, n in zip(p.devices, "CD", strict=True)))


def test_estimate_rigs_is_estimate_rig_under_sycl_on_intel_cards() -> None:
    """SYCL's unreordered types (sycl_kernels): the columns charge them as the single row."""
    rnd = random.Random(7)
    query = Query(backend="sycl")
    # two models whose formats ggml-sycl does not all reorder (Q5_0 fallbacks, MXFP4 experts)
    models = [get_model("NVIDIA-Nemotron-Nano-9B-v2"), get_model("gpt-oss-20b"),
              *rnd.sample(store.models(), 13)]
    cards = [c for c in store.cards() if c.vendor == "Intel" and c.usable_memory_gib > 8][:3]
    # one device (its own estimate, with the slowest kernels' ratio a novel model's range sits
    # on) and two
    rows = [(m, engine._rig_terms(m, query, None), Rig((c,) * n, 64.0))
            for m in models for c in cards for n in (1, 2)]
    batched = estimate_rigs(rows, query, LLAMA_CPP)
    for (m, terms, rig), got in zip(rows, batched, strict=True):
        assert got == estimate_rig(m, terms, rig, query, LLAMA_CPP), (m.name, rig.name)
