"""rig_engine.estimate_rig for many (model, terms, rig) rows at once: a report's rig rows.

A model page asks one model on ~870 rigs (`gpus=2&ram=64`), a card page every model on one rig;
row by row the --fit search costs ~0.4 ms a row. Here the rows of the same number of GPUs walk
their formats together: each step places every row still looking with
placement_batch.place_many (the same procedure and floats as placement.place), and the device
speeds of all rows come from one call (rig_engine.device_speeds). Rows with a placement the
user gives, or no GPU, go through rig_engine.estimate_rig. A test compares every row with it.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tpscalc.catalog.schema import Architecture, Model
from tpscalc.estimate import memory as mem
from tpscalc.estimate.calibration_store import calibration
from tpscalc.estimate.model_terms import ModelTerms
from tpscalc.estimate.placement import Placement
from tpscalc.estimate.placement_batch import Floats, Placed, place_many
from tpscalc.estimate.query import Query, Rig
from tpscalc.estimate.rig_engine import (
    GIB,
    DeviceSpeeds,
    _Layout,
    _pages,
    _shared_layout,
    _usable_ram_bytes,
    device_speeds,
    estimate_placed,
    estimate_rig,
    pick,
)
from tpscalc.estimate.runtime import Runtime
from tpscalc.estimate.types import Estimate, FitLabel

Row = tuple[Model, ModelTerms, Rig]
_Tried = tuple[int, _Layout, tuple[Placed, int], FitLabel]
NO_SPEEDS = DeviceSpeeds([], [])  # a row that does not fit runs nowhere
_LABELS: tuple[FitLabel, ...] = ("no", "offload", "comfortable", "tight")


def estimate_rigs(rows: Sequence[Row], query: Query, runtime: Runtime) -> list[Estimate]:
    """[estimate_rig(model, terms, rig, query, runtime) for each row], in order."""
    out: list[Estimate | None] = [None] * len(rows)
    groups: dict[int, list[int]] = {}
    for i, (model, terms, rig) in enumerate(rows):
        if rig.devices and rig.n_gpu_layers is None and rig.n_cpu_moe is None \
                and rig.tensor_split is None:
            groups.setdefault(len(rig.devices), []).append(i)
        else:
            out[i] = estimate_rig(model, terms, rig, query, runtime)
    for at in groups.values():
        for i, e in zip(at, _group([rows[i] for i in at], query, runtime), strict=True):
            out[i] = e
    return [e for e in out if e is not None]


def _arch(model: Model) -> Architecture:
    return model.architecture or mem.approx_architecture(model.parameters_total)


def _memory(rows: Sequence[Row], query: Query, runtime: Runtime
            ) -> tuple[Floats, Floats, Floats, Floats]:
    """Every row's usable bytes and fixed bytes per GPU (at the context and at twice it), as
    rig_engine._slots makes them, and its RAM (NaN: none may take weights)."""
    per_card: dict[int, tuple[float, float]] = {}
    for _, _, rig in rows:
        for c in rig.devices:
            if id(c) not in per_card:
                per_card[id(c)] = (c.usable_memory_gib * GIB, float(runtime.overhead_bytes(
                    query.backend or runtime.default_backend(c))))
    usable = np.array([[per_card[id(c)][0] for c in r.devices] for _, _, r in rows])
    overhead = np.array([[per_card[id(c)][1] for c in r.devices] for _, _, r in rows])
    main = np.zeros(usable.shape[1], dtype=bool)
    main[0] = True  # the image encoder sits on the first GPU
    vision = np.where(main, np.array([t.vision for _, t, _ in rows])[:, None], 0.0)
    compute = np.array([[t.compute, t.compute_doubled] for _, t, _ in rows])
    ram = np.array([np.nan if (b := _usable_ram_bytes(r)) is None else b for _, _, r in rows])
    return (usable, compute[:, :1] + vision + overhead, compute[:, 1:] + vision + overhead,
            ram)


def _layouts(rows: Sequence[Row], j: int, query: Query, doubled: bool) -> list[_Layout]:
    """Each row's layout at format j (a model page's rows share one model: looked up once)."""
    by_terms: dict[int, _Layout] = {}
    out = []
    for model, terms, _ in rows:
        lay = by_terms.get(id(terms))
        if lay is None:
            lay = by_terms[id(terms)] = _shared_layout(_arch(model), terms, j, query, doubled)
        out.append(lay)
    return out


def _group(rows: Sequence[Row], query: Query, runtime: Runtime) -> list[Estimate]:
    """The rows of one GPU count: formats walked together, least compressed first."""
    usable, buffer, buffer2, ram = _memory(rows, query, runtime)
    tried: list[list[_Tried]] = [[] for _ in rows]
    looking = list(range(len(rows)))
    # a row with an offload answer keeps it unless a later format fits all on the GPUs: the
    # later ones need not search the RAM (what they would offload is never chosen)
    search = np.ones(len(rows), dtype=bool)
    j = 0
    while looking := [i for i in looking if j < len(rows[i][1].quants)]:
        at = np.array(looking)
        lays = _layouts([rows[i] for i in looking], j, query, False)
        placed = place_many([lay.model for lay in lays], usable[at], buffer[at], ram[at],
                            search[at])
        on_gpus = placed.fits & (placed.cpu_layers == 0) & (placed.cpu_expert_layers == 0)
        roomy = np.zeros(len(looking), dtype=bool)
        if on_gpus.any():  # comfortable if all on the GPUs at twice the context too
            k = np.flatnonzero(on_gpus)
            doubled = place_many(
                [lay.model for lay in _layouts([rows[looking[x]] for x in k], j, query, True)],
                usable[at[k]], buffer2[at[k]], ram[at[k]])
            roomy[k] = doubled.fits & (doubled.cpu_layers == 0) & (doubled.cpu_expert_layers == 0)
        labels = np.where(~placed.fits, 0, np.where(~on_gpus, 1, np.where(roomy, 2, 3)))
        # _pages asks first that every device fits: the rest need no placement made
        may_page = (~placed.fits & placed.devices_fit).tolist()
        for x, (i, k) in enumerate(zip(looking, labels.tolist(), strict=True)):
            label = _LABELS[k]
            rig = rows[i][2]
            if label == "no" and may_page[x] and rig.ram_gib is not None and _pages(
                    placed.placement(x, [c.name for c in rig.devices]), rig, lays[x]):
                label = "paging"  # only the RAM is short: rig_engine._label's rule
            tried[i].append((j, lays[x], (placed, x), label))
        search[at[labels == 1]] = False
        looking = [i for i, done in zip(looking, on_gpus.tolist(), strict=True) if not done]
        j += 1
    return _estimates(rows, [pick(t) for t in tried], query, runtime)


def _estimates(rows: Sequence[Row], chosen: Sequence[_Tried], query: Query,
               runtime: Runtime) -> list[Estimate]:
    """Each row's estimate at its chosen format and placement, the speeds of all in one go."""
    placements = _placements(rows, chosen)
    speeds = iter(device_speeds(
        [(terms, terms.quants[j], lay, p, rig)
         for (_, terms, rig), (j, lay, _, label), p in zip(rows, chosen, placements, strict=True)
         if label != "no"], query, calibration()))
    return [estimate_placed(model, _arch(model), terms, j, lay, p, label, rig, query, runtime,
                            next(speeds) if label != "no" else NO_SPEEDS)
            for (model, terms, rig), (j, lay, _, label), p in zip(rows, chosen, placements,
                                                                  strict=True)]


def _placements(rows: Sequence[Row], chosen: Sequence[_Tried]) -> list[Placement]:
    """Each row's chosen placement, read from the Placed of its format in one go per Placed."""
    by_placed: dict[int, tuple[Placed, list[int]]] = {}
    for i, (_, _, (placed, _), _) in enumerate(chosen):
        by_placed.setdefault(id(placed), (placed, []))[1].append(i)
    out: list[Placement | None] = [None] * len(rows)
    for placed, at in by_placed.values():
        made = placed.placements([chosen[i][2][1] for i in at],
                                 [[c.name for c in rows[i][2].devices] for i in at])
        for i, p in zip(at, made, strict=True):
            out[i] = p
    return [p for p in out if p is not None]
