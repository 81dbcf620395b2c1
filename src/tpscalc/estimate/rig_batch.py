"""rig_engine.estimate_rig for many (model, terms, rig) rows at once: a report's rig rows.

A model page asks one model on ~870 rigs (`gpus=2&ram=64`), a card page every model on one rig.
Here the rows of the same number of GPUs walk their formats together, once for the rows alike
(the same terms, GPU memory, buffers and RAM: a model page's 875 rigs are a few dozen): each
step places every row still looking with placement_batch.place_many (the same procedure and
floats as placement.place), all the remaining formats in one step once few are left. The
device speeds of all rows come from one call over numpy columns (speed_columns.py, speed's
formulas), and their stages are composed over columns of the rows by the single answer's own
formulas (rig_stages.py, novelty.widened_by), before each row's Estimate is made. Rows with a
placement the user gives, or no GPU, go through rig_engine.estimate_rig. A test compares every
row with it.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from tpscalc.catalog.schema import Architecture, Card, Model
from tpscalc.estimate import host
from tpscalc.estimate import memory as mem
from tpscalc.estimate.calibration import Band, Calibration
from tpscalc.estimate.calibration_store import calibration
from tpscalc.estimate.model_terms import ModelTerms
from tpscalc.estimate.novelty import (
    Tier,
    lower_confidence,
    model_tier,
    on_slowest,
    tier_band,
    widened_by,
)
from tpscalc.estimate.placement import Placement
from tpscalc.estimate.placement_batch import Bools, Floats, Placed, place_many
from tpscalc.estimate.query import Query, Rig
from tpscalc.estimate.rig_engine import (
    _CONFIDENCE_ORDER,
    _CONFIDENCE_RANK,
    GIB,
    DeviceSpeeds,
    _Layout,
    _ram_rate,
    _shared_layout,
    _shares,
    _usable_ram_bytes,
    estimate_placed,
    estimate_rig,
    pick,
    placed_figures,
    tiered,
)
from tpscalc.estimate.rig_stages import (
    DEFAULT_PCIE_GB_S,
    HOST_BOUNDS,
    PCIE_EFFICIENCY,
    cpu_part_figures,
    decode_figures,
    prefill_figures,
)
from tpscalc.estimate.runtime import Runtime
from tpscalc.estimate.speed_columns import (
    DecodeColumns,
    DecodeFigures,
    PrefillColumns,
    decode_columns,
    decode_estimate,
    prefill_columns,
)
from tpscalc.estimate.types import (
    Bound,
    Confidence,
    DecodeEstimate,
    Estimate,
    FitLabel,
    MemoryBreakdown,
    PrefillEstimate,
)

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
    overhead_of: dict[str, float] = {}  # per backend
    for _, _, rig in rows:
        for c in rig.devices:
            if id(c) not in per_card:
                backend = query.backend or runtime.default_backend(c)
                if backend not in overhead_of:
                    overhead_of[backend] = float(runtime.overhead_bytes(backend))
                per_card[id(c)] = (c.usable_memory_gib * GIB, overhead_of[backend])
    usable = np.array([[per_card[id(c)][0] for c in r.devices] for _, _, r in rows])
    overhead = np.array([[per_card[id(c)][1] for c in r.devices] for _, _, r in rows])
    main = np.zeros(usable.shape[1], dtype=bool)
    main[0] = True  # the image encoder sits on the first GPU
    vision = np.where(main, np.array([t.vision for _, t, _ in rows])[:, None], 0.0)
    compute = np.array([[t.compute, t.compute_doubled] for _, t, _ in rows])
    ram = np.array([np.nan if (b := _usable_ram_bytes(r)) is None else b for _, _, r in rows])
    return (usable, compute[:, :1] + vision + overhead, compute[:, 1:] + vision + overhead,
            ram)


def _group(rows: Sequence[Row], query: Query, runtime: Runtime) -> list[Estimate]:
    """The rows of one GPU count: formats walked together, least compressed first, once for
    the rows alike (a model page's ~870 rigs come in a few dozen memory sizes)."""
    usable, buffer, buffer2, ram = _memory(rows, query, runtime)
    first, back = _alike(rows, usable, buffer, buffer2, ram)
    if len(first) < len(rows):
        at = np.array(first)
        chosen = _search([rows[i] for i in first], usable[at], buffer[at], buffer2[at], ram[at],
                         query)
        return _estimates(rows, [chosen[k] for k in back], query, runtime)
    return _estimates(rows, _search(rows, usable, buffer, buffer2, ram, query), query, runtime)


def _alike(rows: Sequence[Row], usable: Floats, buffer: Floats, buffer2: Floats,
           ram: Floats) -> tuple[list[int], list[int]]:
    """The first of each set of rows whose search is the same (the same terms, GPU memory and
    buffers, RAM), and each row's set: every step of the search reads only these, and the
    device names, which a placement takes when it is read."""
    kinds: dict[int, int] = {}
    keys = np.column_stack([
        np.array([kinds.setdefault(id(t), len(kinds)) for _, t, _ in rows], dtype=np.float64),
        usable, buffer, buffer2, np.nan_to_num(ram, nan=-1.0), np.isnan(ram),
        np.array([r.ram_gib is None for _, _, r in rows])])
    raw, size = keys.tobytes(), keys.shape[1] * keys.itemsize
    seen: dict[bytes, int] = {}
    back = [seen.setdefault(raw[i:i + size], len(seen)) for i in range(0, len(raw), size)]
    first = [0] * len(seen)
    for i in range(len(back) - 1, -1, -1):
        first[back[i]] = i
    return first, back


def _search(rows: Sequence[Row], usable: Floats, buffer: Floats, buffer2: Floats, ram: Floats,
            query: Query) -> list[_Tried]:
    """Each row's chosen format, layout, placement and fit (rig_engine.estimate_rig's walk):
    a format of every row still looking at each step, and once few are left, all their
    formats in one step (each placement stands alone; the walk keeps what it would have)."""
    tried: list[list[_Tried]] = [[] for _ in rows]
    looking = list(range(len(rows)))
    # a row with an offload answer keeps it unless a later format fits all on the GPUs: the
    # later ones need not search the RAM (what they would offload is never chosen)
    search = np.ones(len(rows), dtype=bool)
    j = 0
    while looking := [i for i in looking if j < len(rows[i][1].quants)]:
        if sum(len(rows[i][1].quants) - j for i in looking) <= AT_ONCE:
            pairs = [(i, f) for i in looking for f in range(j, len(rows[i][1].quants))]
            _step(rows, pairs, usable, buffer, buffer2, ram, search, query, tried)
            break
        done = _step(rows, [(i, j) for i in looking], usable, buffer, buffer2, ram, search,
                     query, tried)
        looking = [i for i in looking if i not in done]
        j += 1
    return [pick(t) for t in tried]


# Placements of (row, format) pairs made in one step once the rest of the walk has this many:
# a step's numpy calls cost about the same for 10 rows as for 500
AT_ONCE = 512


def _step(rows: Sequence[Row], pairs: Sequence[tuple[int, int]], usable: Floats,
          buffer: Floats, buffer2: Floats, ram: Floats, search: Bools, query: Query,
          tried: list[list[_Tried]]) -> set[int]:
    """Place each (row, format) of `pairs` (a row's in format order), add each to the row's
    tried formats up to the first all on its GPUs; the rows that reached one. A row's later
    pairs after an offload answer are placed with the RAM searched, as its earlier ones: what
    they offload is never chosen (rig_engine.pick takes the first offload)."""
    at = np.array([i for i, _ in pairs])
    lays = _pair_layouts(rows, pairs, query, False)
    placed = place_many([lay.model for lay in lays], usable[at], buffer[at], ram[at],
                        search[at])
    on_gpus = placed.fits & (placed.cpu_layers == 0) & (placed.cpu_expert_layers == 0)
    roomy = np.zeros(len(pairs), dtype=bool)
    if on_gpus.any():  # comfortable if all on the GPUs at twice the context too
        k = np.flatnonzero(on_gpus)
        doubled = place_many(
            [lay.model for lay in _pair_layouts(rows, [pairs[x] for x in k.tolist()], query, True)],
            usable[at[k]], buffer2[at[k]], ram[at[k]])
        roomy[k] = doubled.fits & (doubled.cpu_layers == 0) & (doubled.cpu_expert_layers == 0)
    labels = np.where(~placed.fits, 0, np.where(~on_gpus, 1, np.where(roomy, 2, 3)))
    paging = _paging(rows, pairs, lays, placed, ram[at])
    done: set[int] = set()
    for x, ((i, j), k) in enumerate(zip(pairs, labels.tolist(), strict=True)):
        if i in done:
            continue
        label: FitLabel = "paging" if x in paging else _LABELS[k]
        tried[i].append((j, lays[x], (placed, x), label))
        if k == 1:
            search[i] = False
        elif k >= 2:
            done.add(i)
    return done


def _paging(rows: Sequence[Row], pairs: Sequence[tuple[int, int]], lays: Sequence[_Layout],
            placed: Placed, ram: Floats) -> set[int]:
    """The pairs that run paging, where only the RAM is short (rig_engine._pages over columns:
    every device fits, the RAM is known, and its CPU part, from cpu_part_figures, pages)."""
    ask = np.array([x for x in np.flatnonzero(~placed.fits & placed.devices_fit).tolist()
                    if rows[pairs[x][0]][2].ram_gib is not None], dtype=np.int64)
    if not ask.size:
        return set()

    def col(values: list[float]) -> Floats:
        return np.array(values, dtype=np.float64)

    asked = [lays[x] for x in ask.tolist()]
    _, _, dense_stored, expert_stored, resident = cpu_part_figures(
        col([lay.model.n_layers for lay in asked]), col([lay.read for lay in asked]),
        col([lay.output_read for lay in asked]),
        col([lay.expert_read_per_layer for lay in asked]),
        col([lay.model.expert_bytes for lay in asked]), 0.0, placed.cpu_layers[ask],
        placed.cpu_expert_layers[ask], placed.output_on_gpu[ask], placed.cpu_weights[ask],
        placed.cpu_kv[ask], col([lay.model.embedding_bytes for lay in asked]),
        np.where(np.isnan(ram[ask]), np.inf, ram[ask]))  # NaN: no RAM limit (unified)
    return set(ask[host.pages(dense_stored, expert_stored, resident)].tolist())


def _pair_layouts(rows: Sequence[Row], pairs: Sequence[tuple[int, int]], query: Query,
                  doubled: bool) -> list[_Layout]:
    """Each (row, format)'s layout (a model page's rows share one model: looked up once)."""
    made: dict[tuple[int, int], _Layout] = {}
    out = []
    for i, j in pairs:
        model, terms, _ = rows[i]
        lay = made.get((id(terms), j))
        if lay is None:
            lay = made[(id(terms), j)] = _shared_layout(_arch(model), terms, j, query, doubled)
        out.append(lay)
    return out


def _estimates(rows: Sequence[Row], chosen: Sequence[_Tried], query: Query,
               runtime: Runtime) -> list[Estimate]:
    """Each row's estimate at its chosen format and placement: the device speeds of all in one
    go, and their stages composed over every row at once (_composed)."""
    placements = _placements(rows, chosen)
    placed = [(terms, terms.quants[j], lay, p, rig)
              for (_, terms, rig), (j, lay, _, label), p in zip(rows, chosen, placements,
                                                                strict=True)
              if label != "no"]
    alike = [t for t in chosen if t[3] != "no"]  # rows alike share one chosen entry
    composed = iter(_tiers([m for (m, _, _), t in zip(rows, chosen, strict=True)
                            if t[3] != "no"], [t for t, *_ in placed],
                           _composed(placed, query, alike), calibration()))
    figures: dict[int, tuple[MemoryBreakdown, float]] = {}  # per chosen entry: rows alike
    out = []
    for (model, terms, rig), t, p in zip(rows, chosen, placements, strict=True):
        j, lay, _, label = t
        held = figures.get(id(t))
        if held is None:
            held = figures[id(t)] = placed_figures(terms, j, lay, p)
        out.append(estimate_placed(model, _arch(model), terms, j, lay, p, label, rig, query,
                                   runtime, NO_SPEEDS,
                                   next(composed) if label != "no" else None, held))
    return out


Composed = tuple[DecodeEstimate, PrefillEstimate | None]


# A composed row's figures before they become estimates (each made once, after _tiers):
# DecodeEstimate's (speed_columns.DecodeFigures; no measurement: with_measured comes later) and
# PrefillEstimate's (tokens/s, low, high, seconds, bound).
_Decode = DecodeFigures
_Prefill = tuple[float, float, float, float, Bound]
_Figures = tuple[_Decode, _Prefill | None]


def _tiers(models: Sequence[Model], terms: Sequence[ModelTerms], composed: Sequence[_Figures],
           cal: Calibration) -> list[Composed]:
    """rig_engine.tiered of every row: the ranges of a model nobody measured widened to its
    tier's band over columns of the rows of one tier (novelty.widened_by), a guessed model's
    row by itself."""
    out: list[Composed | None] = [None] * len(composed)
    by_tier: dict[Tier, list[int]] = {}
    tiers: dict[int, Tier] = {}  # per model (a model page's rows are all of one)
    for i, (m, t, (d, p)) in enumerate(zip(models, terms, composed, strict=True)):
        if t.approximated:
            out[i] = tiered(decode_estimate(d), None if p is None else PrefillEstimate(*p), m,
                            t, cal)
            continue
        tier = tiers.get(id(m))
        if tier is None:
            tier = tiers[id(m)] = model_tier(m, cal)
        if tier != "measured":
            by_tier.setdefault(tier, []).append(i)
        else:
            out[i] = (decode_estimate(d), None if p is None else PrefillEstimate(*p))
    for tier, at in by_tier.items():
        decodes = [composed[i][0] for i in at]
        levels = [d[3] for d in decodes]
        band = {lv: tier_band(cal.decode_bands, lv, tier) for lv in set(levels)}
        lower = {lv: cast(Confidence, lower_confidence(lv, tier)) for lv in band}
        lo, hi = _widened(decodes, [on_slowest(band[lv], d[5])
                                    for lv, d in zip(levels, decodes, strict=True)])
        pre = [(k, p) for k, i in enumerate(at) if (p := composed[i][1]) is not None]
        keys = [(levels[k], terms[at[k]].is_moe) for k, _ in pre]
        prompt_band = {key: tier_band(cal.prefill_bands, key[0], tier, key[1]) for key in set(keys)}
        plo, phi = _widened([p for _, p in pre], [prompt_band[key] for key in keys])
        widened_prefill: dict[int, PrefillEstimate] = {
            k: PrefillEstimate(p[0], a, b, p[3], p[4])
            for (k, p), a, b in zip(pre, plo, phi, strict=True)}
        for k, (i, d) in enumerate(zip(at, decodes, strict=True)):
            out[i] = (DecodeEstimate(d[0], lo[k], hi[k], lower[d[3]], d[4], None, d[5]),
                      widened_prefill.get(k))
    return [c for c in out if c is not None]


def _widened(ranges: Sequence[_Decode | _Prefill], bands: Sequence[Band | None]
             ) -> tuple[list[float], list[float]]:
    """novelty.widened of each (tokens/s, low, high, ...) by its band, over columns."""
    if not ranges:
        return [], []
    tps, low, high = np.array([r[:3] for r in ranges], dtype=np.float64).T  # the figures alone
    lo, hi = widened_by(tps, low, high,
                        np.array([np.nan if b is None else b.low_ratio for b in bands]),
                        np.array([np.nan if b is None else b.high_ratio for b in bands]))
    return lo.tolist(), hi.tolist()


def _padded(values: Sequence[float] | Floats, spans: Sequence[int], pad: float) -> Floats:
    """A flat list of every row's device values as [rows, most devices], `pad` after a row's
    own (a row's devices keep their order: sums over the columns add them as rig_engine does,
    a pad adding nothing)."""
    counts = np.array(spans, dtype=np.int64)
    rows = np.repeat(np.arange(len(spans)), counts)
    slots = np.arange(len(values)) - np.repeat(np.cumsum(counts) - counts, counts)
    out = np.full((len(spans), max(1, int(counts.max(initial=0)))), pad)
    out[rows, slots] = values
    return out


def _composed(placed: Sequence[tuple[ModelTerms, str, _Layout, Placement, Rig]],
              query: Query, alike: Sequence[object]) -> list[_Figures]:
    """rig_engine._decode and _prefill of every placed row (terms, format, layout, placement,
    rig), from the same formulas (decode_figures, prefill_figures, cpu_part_figures) over
    columns of the rows."""
    if not placed:
        return []
    decode, prefill, spans = _device_speeds(placed, query, alike)
    with np.errstate(all="ignore"):  # the formulas' unused branches may divide by 0
        dec = _decode_columns(decode, spans[0])
        part = _part_columns(placed, alike)
        return _compose(placed, dec, part, prefill, spans[1], query)


_Share = dict[str, Any]


def _device_speeds(placed: Sequence[tuple[ModelTerms, str, _Layout, Placement, Rig]],
                   query: Query, alike: Sequence[object]
                   ) -> tuple[DecodeColumns, PrefillColumns, tuple[list[int], list[int]]]:
    """rig_engine.device_speeds over columns: every placed row's devices, each its share of
    the terms (rig_engine._shares, once for rows alike: only their cards differ), in one
    speed_columns call each; and how many decode and prefill rows each placed row has."""
    shares: tuple[list[_Share], list[_Share]] = ([], [])
    # id(alike entry) -> per kind (decode, prefill): its devices' indices, their shares' indices
    groups: dict[int, tuple[tuple[list[int], list[int]], ...]] = {}
    cards: tuple[list[Card], list[Card]] = ([], [])
    at: tuple[list[int], list[int]] = ([], [])
    spans: tuple[list[int], list[int]] = ([], [])
    for (t, q, lay, p, rig), key in zip(placed, alike, strict=True):
        held = groups.get(id(key))
        if held is None:
            made = _shares(t, q, lay, p, query.backend)
            held = groups[id(key)] = tuple(
                ([i for i, _ in own], list(range(len(flat), len(flat) + len(own))))
                for flat, own in zip(shares, made, strict=True))
            for flat, own in zip(shares, made, strict=True):
                flat += [share for _, share in own]
        devices = rig.devices
        for (on, entries), c, a, n in zip(held, cards, at, spans, strict=True):
            c += devices if len(on) == len(devices) else [devices[i] for i in on]
            a += entries
            n.append(len(on))
    test = query.test

    def col(kind: int, name: str) -> Any:
        return np.array([s[name] for s in shares[kind]], dtype=np.float64)[
            np.array(at[kind], dtype=np.int64)]

    def flags(kind: int, name: str) -> list[bool]:
        return [shares[kind][k][name] for k in at[kind]]

    decode = decode_columns(
        col(0, "read_bytes_per_token"), col(0, "kv_bytes_at_context"), col(0, "n_layers"),
        cards[0], query.backend, calibration(), col(0, "params_read"),
        [shares[0][k]["quant"] for k in at[0]], col(0, "attention_flops"),
        col(0, "expert_matrices"), col(0, "depth_tokens"), col(0, "expert_params"),
        col(0, "read_factor"), col(0, "read_factor_slowest"))
    prefill = prefill_columns(
        col(1, "flops_per_token"), test.n_prompt, cards[1], query.backend, calibration(),
        col(1, "weights_bytes"), flags(1, "quantized"), test.n_ubatch,
        col(1, "attention_flops_per_token"), col(1, "expert_params"), col(1, "expert_batch"),
        col(1, "expert_gemms"), test.flash_attn, flags(1, "bf16"), flags(1, "wmma_attention"),
        col(1, "context_tokens"))
    return decode, prefill, spans


def _decode_columns(decode: DecodeColumns, spans: Sequence[int]) -> dict[str, Any]:
    """The devices' decode estimates as columns: sums, slowest, confidence, the first."""
    tps = _padded(decode.tokens_per_s, spans, np.inf)
    high = _padded(decode.high, spans, np.inf)
    low = _padded(decode.low, spans, np.inf)
    rank = _padded([_CONFIDENCE_RANK[c] for c in decode.confidence], spans, 2.0)
    gpu_s, fast, slow = np.zeros(len(spans)), np.zeros(len(spans)), np.zeros(len(spans))
    for j in range(tps.shape[1]):  # device order, as _decode adds them
        gpu_s, fast, slow = gpu_s + 1.0 / tps[:, j], fast + 1.0 / high[:, j], slow + 1.0 / low[:, j]
    starts = np.cumsum(spans) - spans
    slowest = starts + np.argmin(tps, axis=1)  # the first of equals, as _decode
    n = np.array(spans)
    return {"gpu_s": gpu_s, "fast": fast, "slow": slow, "n": n, "decode": decode,
            "first": starts, "slowest": slowest,
            "rank": np.where(n > 0, rank.min(axis=1), 0).astype(np.int64).tolist()}


def _part_columns(every: Sequence[tuple[ModelTerms, str, _Layout, Placement, Rig]],
                  alike: Sequence[object]) -> tuple[Floats, ...]:
    """rig_engine._cpu_part of every row, as host.CpuPart's fields in columns (worked out once
    for rows alike: the same layout, placement figures and RAM)."""
    seen: dict[int, int] = {}
    at = np.array([seen.setdefault(id(k), len(seen)) for k in alike], dtype=np.int64)
    firsts: dict[int, int] = {}
    for i, k in enumerate(alike):
        firsts.setdefault(id(k), i)
    placed = [every[i] for i in firsts.values()]

    def col(values: list[Any]) -> Floats:
        return np.array(values)

    ram = [_usable_ram_bytes(rig) for _, _, _, _, rig in placed]
    return tuple(c[at] for c in cpu_part_figures(
        col([lay.model.n_layers for _, _, lay, _, _ in placed]),
        col([lay.read for _, _, lay, _, _ in placed]),
        col([lay.output_read for _, _, lay, _, _ in placed]),
        col([lay.expert_read_per_layer for _, _, lay, _, _ in placed]),
        col([lay.model.expert_bytes for _, _, lay, _, _ in placed]),
        col([t.kv_decode for t, _, _, _, _ in placed]),
        col([p.cpu_layers for _, _, _, p, _ in placed]),
        col([p.cpu_expert_layers for _, _, _, p, _ in placed]),
        col([p.output_on_gpu for _, _, _, p, _ in placed]),
        col([p.cpu_weights_bytes for _, _, _, p, _ in placed]),
        col([p.cpu_kv_bytes for _, _, _, p, _ in placed]),
        col([p.embedding_bytes for _, _, _, p, _ in placed]),
        col([np.inf if r is None else r for r in ram])))


def _compose(placed: Sequence[tuple[ModelTerms, str, _Layout, Placement, Rig]],
             dec: dict[str, Any], part: tuple[Floats, ...],
             prefill: PrefillColumns, spans: Sequence[int],
             query: Query) -> list[_Figures]:
    """Each row's (decode, prefill) from its device columns and CPU part (_decode, _prefill)."""
    dense_read, expert_read, dense_stored, expert_stored, resident = part
    cpu_read = dense_read + expert_read  # host.CpuPart.read
    rates: list[tuple[float, Bound]] = [
        _ram_rate(rig, q, t.is_moe) if r > 0 else (1.0, "ram_bandwidth")
             for (t, q, _, _, rig), r in zip(placed, cpu_read.tolist(), strict=True)]
    storage_gb_s = np.array([rig.storage_gb_s for *_, rig in placed])
    tps, low, high, k, host_s, alone = decode_figures(
        dec["gpu_s"], dec["fast"], dec["slow"], dec["n"], cpu_read,
        np.array([r for r, _ in rates]), np.array([b != "ram_bandwidth" for _, b in rates]),
        host.paged_bytes(dense_read, dense_stored, expert_read, expert_stored, resident),
        storage_gb_s)
    ests: DecodeColumns = dec["decode"]
    decodes: list[_Decode] = []
    for i, (t, lo, hi, kind, h, one, rank, first, slowest, (_, ram_bound)) in enumerate(zip(
            tps.tolist(), low.tolist(), high.tolist(), k.tolist(), host_s.tolist(),
            alone.tolist(), dec["rank"], dec["first"].tolist(), dec["slowest"].tolist(), rates,
            strict=True)):
        if one:
            decodes.append(ests.figures(first))
            continue
        bound: Bound = ((ests.bound_of(slowest) if dec["n"][i] else "bandwidth") if kind == 0
                        else HOST_BOUNDS[kind] if kind < 4 else ram_bound)
        decodes.append((t, lo, hi, "low" if h > 0 else _CONFIDENCE_ORDER[rank], bound, 1.0))
    return list(zip(decodes, _prefills(placed, prefill, spans, part, storage_gb_s, query),
                    strict=True))


def _prefills(placed: Sequence[tuple[ModelTerms, str, _Layout, Placement, Rig]],
              prefill: PrefillColumns, spans: Sequence[int],
              part: tuple[Floats, ...], storage_gb_s: Floats, query: Query
              ) -> list[_Prefill | None]:
    """Each row's prompt estimate from its devices' (rig_engine._prefill over columns)."""
    test = query.test
    prompt, passes = test.n_prompt, math.ceil(test.n_prompt / test.n_ubatch)
    _, _, dense_stored, expert_stored, resident = part
    paged = passes * host.paged_bytes(dense_stored, dense_stored, expert_stored, expert_stored,
                                      resident) / (storage_gb_s * 1e9)  # CpuPart.paged_per_pass
    known = prefill.known
    unknown = (_padded((~known).astype(np.float64), spans, 0.0).max(axis=1) > 0).tolist()
    tps = _padded(np.where(known, prefill.tokens_per_s, np.inf), spans, np.inf)
    low = _padded(np.where(known, prefill.low, np.inf), spans, np.inf)
    high = _padded(np.where(known, prefill.high, np.inf), spans, np.inf)
    compute, slow, fast = np.zeros(len(spans)), np.zeros(len(spans)), np.zeros(len(spans))
    for j in range(tps.shape[1]):  # device order, as _prefill adds them
        compute = compute + prompt / tps[:, j]
        slow, fast = slow + prompt / low[:, j], fast + prompt / high[:, j]
    starts = (np.cumsum(spans) - spans).tolist()
    slowest = np.argmax(prompt / tps, axis=1).tolist()  # the first of equals, as _prefill
    moved = np.array([p.cpu_weights_bytes - p.embedding_bytes for _, _, _, p, _ in placed])
    link = np.array([PCIE_EFFICIENCY * (rig.pcie_gb_s or DEFAULT_PCIE_GB_S)
                     for *_, rig in placed])
    figures = prefill_figures(prompt, passes, compute, slow, fast, moved, link, paged)
    out: list[_Prefill | None] = []
    for n, first, k, none, (t, lo, hi, seconds, kind, pcie) in zip(
            spans, starts, slowest, unknown, zip(*(f.tolist() for f in figures)), strict=True):
        if n == 0:
            raise ValueError("a placed row with no device to run its prompt")
        if none:
            out.append(None)
        elif n == 1 and pcie <= 0:  # one device alone: its own estimate
            out.append(prefill.figures(first))
        else:
            bound: Bound = ("storage" if kind == 2 else "pcie" if kind == 1
                            else prefill.bound_of(first + k))
            out.append((t, lo, hi, seconds, bound))
    return out


def _placements(rows: Sequence[Row], chosen: Sequence[_Tried]) -> list[Placement]:
    """Each row's chosen placement, read from the Placed of its format in one go per Placed,
    once for rows alike (the same chosen entry): the others take its figures on their own
    devices (Placement.renamed)."""
    firsts: dict[int, int] = {}  # id(chosen entry) -> its first row
    by_placed: dict[int, tuple[Placed, list[int]]] = {}
    for i, t in enumerate(chosen):
        if firsts.setdefault(id(t), i) == i:
            placed = t[2][0]
            by_placed.setdefault(id(placed), (placed, []))[1].append(i)
    made: dict[int, Placement] = {}
    for placed, at in by_placed.values():
        for i, p in zip(at, placed.placements([chosen[i][2][1] for i in at],
                                              [[c.name for c in rows[i][2].devices]
                                               for i in at]), strict=True):
            made[id(chosen[i])] = p
    return [made[id(t)] if firsts[id(t)] == i
            else made[id(t)].renamed([c.name for c in rows[i][2].devices])
            for i, t in enumerate(chosen)]
