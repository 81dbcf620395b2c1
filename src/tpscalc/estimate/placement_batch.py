"""llama.cpp's --fit placement (placement.place without a user placement) for many rows at once.

Row i places layouts[i] on a rig of D GPUs (the same D on every row) whose usable and fixed
bytes are usable[i] and buffer[i], with ram[i] bytes of system RAM (NaN: not known). The steps
and the float operations are placement.place's, each one over all rows with numpy: 1,024 MiB
kept free per device, layers split in proportion to free memory and filled back to front, the
output layer on the last GPU, MoE experts to the CPU (the fewest --n-cpu-moe, by bisection)
before whole layers (the fewest CPU layers). The RAM is one input, whatever rule set it.
A test compares every row with placement.place. Pure: arrays in, arrays out.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tpscalc.estimate.placement import (
    MARGIN_BYTES,
    DevicePlacement,
    ModelLayout,
    Placement,
)

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class _Layouts:
    """ModelLayout's fields, one entry per row."""

    n: Ints
    layer: Floats
    expert: Floats
    kv: Floats
    output: Floats
    gpu_output: Floats
    embedding: Floats
    offload_buffer: Floats


def _columns(layouts: Sequence[ModelLayout]) -> _Layouts:
    distinct = {id(m): m for m in layouts}  # a model page places one layout on every rig
    rows = {k: (m.n_layers, m.layer_bytes, m.expert_bytes, m.kv_per_layer_bytes, m.output_bytes,
                m.gpu_output_bytes, m.embedding_bytes, m.offload_buffer_bytes)
            for k, m in distinct.items()}
    table = np.array([rows[id(m)] for m in layouts], dtype=np.float64).reshape(-1, 8)
    return _Layouts(table[:, 0].astype(np.int64), *(table[:, j].copy() for j in range(1, 8)))


@dataclass(frozen=True)
class Placed:
    """Rows placed: layers per device, --n-cpu-moe layers, the output layer, bytes per device."""

    layouts: Sequence[ModelLayout]
    counts: Ints  # [rows, devices]
    experts_on_cpu: Ints
    output_on_gpu: Bools
    weights: Floats  # [rows, devices]
    kv: Floats  # [rows, devices]
    buffer: Floats  # [rows, devices], the first grown by a partial offload's copy
    usable: Floats  # [rows, devices]
    cpu_layers: Ints
    cpu_expert_layers: Ints
    cpu_weights: Floats
    cpu_kv: Floats
    fits: Bools
    devices_fit: Bools  # every device within its memory, whatever the RAM holds

    def placements(self, rows: Sequence[int], names: Sequence[Sequence[str]]
                   ) -> list[Placement]:
        """Rows `rows` as placement.place returns them, the devices of rows[k] named names[k]
        (only those rows' entries become Python numbers: a report reads each row once, from
        one of the several placements its formats were tried in)."""
        at = list(rows)
        counts, weights, kv, buffer, usable, cpu, experts, cpu_w, cpu_kv, out, fits = (
            a[at].tolist() for a in (
                self.counts, self.weights, self.kv, self.buffer, self.usable, self.cpu_layers,
                self.cpu_expert_layers, self.cpu_weights, self.cpu_kv, self.output_on_gpu,
                self.fits))
        placed = []
        for k, (i, named) in enumerate(zip(at, names, strict=True)):
            if len(named) != len(counts[k]):
                raise ValueError(f"{len(named)} device names for {len(counts[k])} devices")
            devices = tuple([DevicePlacement(name, c, w, v, b, u, MARGIN_BYTES)
                             for name, c, w, v, b, u in zip(named, counts[k], weights[k], kv[k],
                                                            buffer[k], usable[k])])
            m = self.layouts[i]
            placed.append(Placement(devices, cpu[k], experts[k], cpu_w[k], cpu_kv[k], out[k],
                                    m.n_layers, fits[k], m.embedding_bytes))
        return placed

    def placement(self, i: int, names: Sequence[str]) -> Placement:
        """Row i as placement.place returns it, the devices named `names`."""
        return self.placements([i], [names])[0]


def _proportional(total: Ints, weights: Floats) -> Ints:
    """placement._proportional on every row: `total[i]` layers split by `weights[i]`."""
    rows, d = weights.shape
    s = np.zeros(rows)
    for j in range(d):
        s = s + weights[:, j]
    counts = np.zeros((rows, d), dtype=np.int64)
    live = (total > 0) & (s > 0)
    safe_s = np.where(live, s, 1.0)
    safe_t = np.where(live, total, 1)
    acc, before = np.zeros(rows), np.zeros(rows, dtype=np.int64)
    for j in range(d - 1):
        acc = acc + weights[:, j]
        b = acc / safe_s
        c = np.minimum(safe_t, np.maximum(before, np.ceil(b * safe_t).astype(np.int64)))
        while (down := (c > before) & ~((c - 1) / safe_t < b)).any():
            c = c - down
        while (up := (c < safe_t) & (c / safe_t < b)).any():
            c = c + up
        counts[:, j] = c - before
        before = c
    counts[:, d - 1] = safe_t - before
    counts[~live] = 0
    return counts


_MOST_LAYERS = 2.0**40  # more layers than any room holds: keeps the float-to-int cast exact


def _take(wanted: Ints, cost: Floats, room: Floats) -> Ints:
    """placement._take on every row: how many of `wanted` layers of `cost` fit in `room`."""
    if (cost <= 0).any() or (room == np.inf).any():  # placement._take's other branches
        direct = (wanted <= 0) | (room == np.inf) | (cost <= 0)
        t = _take(wanted, np.where(direct, 1.0, cost), np.where(direct, 0.0, room))
        return np.where(direct, np.maximum(0, wanted), t)
    most = np.minimum(np.floor_divide(room, cost), _MOST_LAYERS).astype(np.int64)
    t = np.minimum(wanted, most)
    while (over := (t > 0) & (t * cost > room)).any():
        t = t - over
    return np.where((room < cost) | (wanted <= 0), 0, t)


def _counts(m: _Layouts, usable: Floats, buffer: Floats, gpu_layers: Ints, experts: Ints,
            fill: bool) -> tuple[Ints, Bools]:
    """placement._counts on every row: layers per device and whether all `gpu_layers` went."""
    free = np.maximum(0.0, usable - buffer - MARGIN_BYTES)
    free[:, -1] = free[:, -1] - m.gpu_output
    target = _proportional(gpu_layers, free)
    rows, d = usable.shape
    counts = np.zeros((rows, d), dtype=np.int64)
    top, lowest = m.n - 1, m.n - gpu_layers
    full = m.layer + m.kv
    light = full - m.expert
    carry = np.zeros(rows, dtype=np.int64)
    for j in range(d - 1, -1, -1):
        want = target[:, j] + carry
        room = free[:, j] if fill else np.full(rows, np.inf)
        wanted_heavy = np.minimum(want, np.maximum(0, top - np.maximum(experts, lowest) + 1))
        heavy = _take(wanted_heavy, full, room)
        rest = np.where(heavy == wanted_heavy,
                        np.minimum(want - heavy, np.maximum(0, top - heavy - lowest + 1)), 0)
        taken = heavy + _take(rest, light, room - heavy * full)
        counts[:, j] = taken
        top = top - taken
        if fill:
            carry = want - taken
    return counts, counts.sum(axis=1) == gpu_layers


def _fewest(ok: Callable[[Ints], Bools], active: Bools, hi: Ints) -> Ints:
    """placement._fewest(1, hi, ok) on the `active` rows, by the same bisection; -1 if none."""
    found = active & ok(hi)
    lo, top = np.ones_like(hi), hi.copy()
    while (live := found & (lo < top)).any():
        mid = np.where(live, (lo + top) // 2, top)
        good = ok(mid)
        top = np.where(live & good, mid, top)
        lo = np.where(live & ~good, mid + 1, lo)
    return np.where(found, lo, -1)


def place_many(layouts: Sequence[ModelLayout], usable: Floats, buffer: Floats,
               ram: Floats, search: Bools | None = None) -> Placed:
    """placement.place(layouts[i], the slots of row i, ram[i]) for every row (NaN RAM: None).

    search: the rows that may move weights to the RAM when they do not fit the GPUs (default:
    those with RAM); a row with RAM left out is placed as without it and, when --fit cannot
    put it all on the GPUs, does not fit (a caller that knows an offload answer already asks
    only whether all fits the GPUs)."""
    m = _columns(layouts)
    n, zeros = m.n, np.zeros(len(layouts), dtype=np.int64)
    counts, ok = _counts(m, usable, buffer, n, zeros, True)
    experts, output, used = zeros.copy(), np.ones(len(layouts), dtype=bool), buffer
    may_move = ~np.isnan(ram) if search is None else search & ~np.isnan(ram)
    stuck = ~ok & ~may_move
    if stuck.any():  # nothing may move: all layers as split, whether they fit or not
        split, split_ok = _counts(m, usable, buffer, n, zeros, False)
        alone = np.zeros_like(split)
        alone[:, 0] = n
        counts[stuck] = np.where(split_ok[:, None], split, alone)[stuck]
    offload = ~ok & may_move
    if offload.any():
        grown = buffer.copy()
        grown[:, 0] = grown[:, 0] + m.offload_buffer
        used = np.where(offload[:, None], grown, buffer)
        k = _fewest(lambda k: _counts(m, usable, grown, n, k, True)[1], offload & (m.expert > 0),
                    n)
        moved = k >= 0
        counts[moved] = _counts(m, usable, grown, n, np.maximum(k, 0), True)[0][moved]
        experts[moved] = k[moved]
        rest = offload & ~moved
        all_experts = np.where(m.expert > 0, n, 0)
        c = _fewest(lambda c: _counts(m, usable, grown, n - c, all_experts, True)[1], rest, n)
        layers = rest & (c >= 0)
        counts[layers] = _counts(m, usable, grown, n - np.maximum(c, 0), all_experts,
                                 True)[0][layers]
        experts[rest] = all_experts[rest]
        none = rest & (c < 0)
        counts[none] = 0
        output[none] = False
    return _built(layouts, m, counts, experts, output, used, usable, ram,
                  stuck & ~np.isnan(ram))


def _built(layouts: Sequence[ModelLayout], m: _Layouts, counts: Ints, experts: Ints,
           output: Bools, buffer: Floats, usable: Floats, ram: Floats, refused: Bools) -> Placed:
    """placement._build on every row: bytes per device and in RAM, and whether it all fits."""
    weights = np.zeros(counts.shape)
    end = m.n.copy()
    for j in range(counts.shape[1] - 1, -1, -1):
        first = end - counts[:, j]
        light = np.maximum(0, np.minimum(experts, end) - first)
        weights[:, j] = light * (m.layer - m.expert) + (end - first - light) * m.layer
        end = first
    weights[:, -1] = np.where(output, weights[:, -1] + m.gpu_output, weights[:, -1])
    kv = counts * m.kv[:, None]
    cpu_layers = m.n - counts.sum(axis=1)
    expert_layers = np.maximum(0, np.minimum(experts, m.n) - cpu_layers)
    cpu_weights = (m.embedding + cpu_layers * m.layer + expert_layers * m.expert
                   + np.where(output, 0.0, m.output))
    cpu_kv = cpu_layers * m.kv
    ram_ok = np.isnan(ram) | (cpu_weights + cpu_kv <= ram)
    device_ok = weights + kv + buffer + MARGIN_BYTES <= usable + 1e-6
    devices_fit: Bools = np.asarray(device_ok.all(axis=1))
    return Placed(layouts, counts, experts, output, weights, kv, buffer, usable, cpu_layers,
                  expert_layers, cpu_weights, cpu_kv, ram_ok & devices_fit & ~refused,
                  devices_fit)
