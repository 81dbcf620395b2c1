"""The engine facade: one model on many rigs (or many models on one rig) in one call.

Composes the pure terms (weights, memory, fit, speed) for the reports, CLI, API and site. It
takes a checked `Query` and `Rig` (estimate/query.py) and asks the `Runtime` (runtime.py) what
the model costs; the data it reads comes through the runtime's and the calibration's loaders.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields, replace
from typing import Any

from tpscalc.catalog import store
from tpscalc.catalog.quants import UnknownQuantizationError, get_quant
from tpscalc.catalog.schema import Architecture, Card, Model
from tpscalc.estimate import memory as mem
from tpscalc.estimate import speed
from tpscalc.estimate.answer import at_level, low_confidence, prefill_at_level, with_measured
from tpscalc.estimate.calibration_store import calibration
from tpscalc.estimate.commands import run_command
from tpscalc.estimate.fit import choose_quants
from tpscalc.estimate.model_terms import ModelTerms as _ModelTerms
from tpscalc.estimate.novelty import with_novelty
from tpscalc.estimate.query import (
    ABOVE_LADDER,
    EstimateInputError,
    Query,
    Rig,
    ladder_position,
)
from tpscalc.estimate.query import RUNTIMES as RUNTIME_NAMES
from tpscalc.estimate.runtime import LLAMA_CPP, LlamaCpp, Runtime
from tpscalc.estimate.runtimes import for_runtime, get_runtime, own_format_name, refused
from tpscalc.estimate.speed_terms import (
    attention_flops_per_token,
    decode_kv_read_bytes,
    expert_batch,
    moe_expert_gemms_per_token,
    moe_expert_matrices_per_token,
    moe_expert_params_per_token,
    wmma_attention_shape,
)
from tpscalc.estimate.sycl_kernels import SYCL, kernel_read_factors
from tpscalc.estimate.types import (
    UNQUANTIZED,
    Estimate,
    FitLabel,
    MemoryBreakdown,
)

GIB = 2**30
# The runtime whose files the catalog build stores terms for (stored_terms_row).
runtime: Runtime = LLAMA_CPP


def _rt(query: Query) -> Runtime:
    """The runtime `query` is for (its formats, memory rules and speed level)."""
    return get_runtime(query.runtime)
_FIT_LABELS: dict[str, FitLabel] = {"comfortable": "comfortable", "tight": "tight", "no": "no"}


def _quant_name(name: str, rt: Runtime = LLAMA_CPP) -> str:
    if not isinstance(rt, LlamaCpp):
        return own_format_name(rt, name)
    try:
        return get_quant(name).name
    except UnknownQuantizationError as exc:
        raise EstimateInputError(str(exc), "bad_quant", exc.suggestions) from exc


# _terms depends on the model, the quantizations and the query only, not on the card: a card
# page asks it for every model, and the next card's page (an export: 850 of them) asks again.
_TERMS_MEMO: dict[tuple[int, tuple[str, ...], Query], tuple[Model, _ModelTerms]] = {}
TERMS_MEMO_SIZE = 8192  # entries (a few kB each); emptied when full


def _terms(model: Model, quants: Sequence[str], query: Query) -> _ModelTerms:
    key = (id(model), tuple(quants), query)
    held = _TERMS_MEMO.get(key)
    if held is not None and held[0] is model:  # the same object, not one at a reused address
        return held[1]
    terms = _stored(model, key[1], query) or _model_terms(model, quants, query)
    if len(_TERMS_MEMO) >= TERMS_MEMO_SIZE:
        _TERMS_MEMO.clear()
    _TERMS_MEMO[key] = (model, terms)
    return terms


TERMS_FIELDS = tuple(f.name for f in fields(_ModelTerms))


def terms_inputs(query: Query) -> tuple[int | str | bool, ...]:
    """All that _model_terms reads of a query: equal inputs, equal terms."""
    t = query.test
    return (query.context, query.kv_type, query.text_only, t.n_prompt, t.n_gen, t.depth,
            t.flash_attn, t.n_ubatch)


def stored_terms_row(model: Model, query: Query) -> tuple[Any, ...]:
    """What tools/build_compact.py stores for a catalog model at `query` (the default query at
    the model's context limit, as a card report asks): the runtime's formats and native format
    of the model, the ladder at `query`, terms_inputs and the values of its _model_terms in
    TERMS_FIELDS order. Plain values: the catalog's pickle names no class of this floor."""
    ladder = _ladder(model, query)
    terms = _model_terms(model, ladder, query)
    return (runtime.formats(model), runtime.native_format(model), ladder, terms_inputs(query),
            tuple(getattr(terms, n) for n in TERMS_FIELDS))


_STORED_ROWS: dict[int, tuple[Model, tuple[Any, ...]]] = {}


def _stored_rows() -> dict[int, tuple[Model, tuple[Any, ...]]]:
    """id(model) -> (model, stored row) for the compact catalog's models, when they are loaded
    and the rows were made with these fields (else {}: every term is computed)."""
    if not _STORED_ROWS:
        held = store.stored_terms()
        if held is not None and tuple(held["fields"]) == TERMS_FIELDS:
            _STORED_ROWS.update((id(m), (m, row))
                                for m, row in zip(held["models"], held["rows"], strict=True))
    return _STORED_ROWS


def _stored_row(model: Model, rt: Runtime = LLAMA_CPP) -> tuple[Any, ...] | None:
    """The row the catalog build stored for `model` (stored_terms_row), when `model` is that
    very catalog object and the runtime `rt` is llama.cpp; else None (computed here)."""
    held = _stored_rows().get(id(model))
    if held is None or held[0] is not model or rt is not LLAMA_CPP or runtime is not LLAMA_CPP:
        return None
    return held[1]


def _stored(model: Model, quants: tuple[str, ...], query: Query) -> _ModelTerms | None:
    """The terms the catalog build stored for `model`, when they are for these quantizations
    and query inputs (a card report's ~1,000 models: ~10 ms less); else None. A test
    recomputes every stored row with the engine's code and compares."""
    row = _stored_row(model, _rt(query))
    if row is None or row[2] != quants or row[3] != terms_inputs(query):
        return None
    return _ModelTerms(*row[4])


def _formats(model: Model, rt: Runtime = LLAMA_CPP) -> tuple[str, ...]:
    """rt.formats(model), as stored for a catalog model."""
    row = _stored_row(model, rt)
    return rt.formats(model) if row is None else row[0]


def _native(model: Model, rt: Runtime = LLAMA_CPP) -> str | None:
    """rt.native_format(model), as stored for a catalog model."""
    row = _stored_row(model, rt)
    return rt.native_format(model) if row is None else row[1]


def _arch(model: Model) -> Architecture:
    """The model's architecture, else the one its parameter count approximates."""
    return model.architecture or mem.approx_architecture(model.parameters_total)


def _model_terms(model: Model, quants: Sequence[str], query: Query) -> _ModelTerms:
    context, kv_type, test = query.context, query.kv_type, query.test
    runtime = _rt(query)
    arch = _arch(model)
    pairs = runtime.weights_bytes_many(model, quants)
    # Decode: `n_gen` tokens after `depth`, each seeing on average depth + n_gen / 2 tokens.
    decode_ctx = test.depth + test.n_gen / 2
    kv_decode = decode_kv_read_bytes(
        arch, decode_ctx, runtime.kv_cache_bytes(arch, max(1, round(decode_ctx)), kv_type),
        kv_type, test.flash_attn)
    prefill_ctx = speed.prompt_mean_context(test.n_prompt, test.depth)
    attention_prefill = attention_flops_per_token(arch, prefill_ctx)
    return _ModelTerms(
        quants=tuple(quants),
        weights=tuple([w for w, _ in pairs]), read_per_token=tuple([r for _, r in pairs]),
        kv=runtime.kv_cache_bytes(arch, context, kv_type),
        kv_doubled=runtime.kv_cache_bytes(arch, 2 * context, kv_type),
        # the query's micro-batch and flash attention: without it the attention scores
        # (context × n_ubatch × heads, f32) live in the buffer
        compute=runtime.compute_buffer_bytes(arch, context, test.n_ubatch, test.flash_attn),
        compute_doubled=runtime.compute_buffer_bytes(arch, 2 * context, test.n_ubatch,
                                                     test.flash_attn),
        approximated=model.architecture is None or model.architecture.approximated,
        n_layers=arch.num_layers,
        flops_per_token=2.0 * model.parameters_active + attention_prefill, is_moe=arch.is_moe,
        vision=0.0 if query.text_only else runtime.vision_bytes(arch),
        kv_decode=kv_decode, attention_decode=attention_flops_per_token(arch, decode_ctx),
        attention_prefill=attention_prefill, params_active=float(model.parameters_active),
        expert_params=moe_expert_params_per_token(arch),
        expert_batch=expert_batch(arch, test.n_prompt, test.n_ubatch),
        expert_gemms=moe_expert_gemms_per_token(arch, test.n_prompt, test.n_ubatch),
        expert_matrices=moe_expert_matrices_per_token(arch), decode_depth=float(test.depth),
        prefill_context=prefill_ctx,
        wmma_attention=wmma_attention_shape(arch),
    )


def _backend(card: Card, backend: str | None, rt: Runtime) -> str:
    return backend or rt.default_backend(card)


def _breakdown(t: _ModelTerms, q: int, overhead: float) -> MemoryBreakdown:
    return mem.breakdown(float(t.weights[q]), t.kv, t.compute + float(overhead), t.vision,
                         t.approximated)


def _evaluate(models: Sequence[Model], terms: Sequence[_ModelTerms], rigs: Sequence[Rig],
              query: Query, bounds: tuple[int | None, int | None]) -> list[Estimate]:
    """One estimate per row: row i is models[i] (terms[i]) on rigs[i]; all rows share one ladder.

    bounds: (ceiling, floor), the least and the most compressed ladder index allowed.
    """
    cards = [r.single_device for r in rigs]
    context, backend = query.context, query.backend
    ceiling, floor = bounds
    quants = terms[0].quants
    rt = _rt(query)
    per_card: dict[int, tuple[str, float, float]] = {}  # a card report repeats one card
    for c in cards:
        if id(c) not in per_card:
            b = _backend(c, backend, rt)
            per_card[id(c)] = (b, float(rt.overhead_bytes(b)), rt.usable_gib(c))
    backends, overhead, usable = (list(x) for x in zip(*(per_card[id(c)] for c in cards)))
    fixed = [t.kv + t.compute + t.vision + o for t, o in zip(terms, overhead)]
    fixed_doubled = [t.kv_doubled + t.compute_doubled + t.vision + o
                     for t, o in zip(terms, overhead)]
    choice = choose_quants([[(w + f) / GIB for w in t.weights] for t, f in zip(terms, fixed)],
                           usable, floor,
                           [[(w + f) / GIB for w in t.weights]
                            for t, f in zip(terms, fixed_doubled)], ceiling)
    rows = [i for i, j in enumerate(choice.index) if j >= 0]
    q = [choice.index[i] for i in rows]
    fit_cards = [cards[i] for i in rows]
    fit_terms = [terms[i] for i in rows]
    cal = calibration()
    test = query.test
    # SYCL's unreordered types (sycl_kernels); every other backend reads at the fitted rate
    factors = ([kernel_read_factors(_arch(models[i]), rt.speed_quant(quants[j]), backend)
                for i, j in zip(rows, q)] if backend == SYCL and isinstance(rt, LlamaCpp)
               else None)
    decode = speed.decode_estimates(
        [t.read_per_token[j] for t, j in zip(fit_terms, q)],
        [t.kv_decode for t in fit_terms], [t.n_layers for t in fit_terms],
        fit_cards, backend, cal, params_read=[t.params_active for t in fit_terms],
        expert_matrices=[t.expert_matrices for t in fit_terms],
        quant=[rt.speed_quant(quants[j]) for j in q],
        attention_flops=[t.attention_decode for t in fit_terms],
        depth_tokens=[t.decode_depth for t in fit_terms],
        expert_params=[t.expert_params for t in fit_terms],
        read_factor=[f for f, _ in factors] if factors else 1.0,
        read_factor_slowest=[w for _, w in factors] if factors else 0.0)
    prefill = speed.prefill_estimates(
        [t.flops_per_token for t in fit_terms], test.n_prompt, fit_cards, backend, cal,
        weights_bytes=[t.weights[j] for t, j in zip(fit_terms, q)],
        quantized=[rt.speed_quant(quants[j]) not in UNQUANTIZED for j in q],
        bf16=[rt.speed_quant(quants[j]) == "BF16" for j in q], ubatch=test.n_ubatch,
        attention_flops_per_token=[t.attention_prefill for t in fit_terms],
        expert_params=[t.expert_params for t in fit_terms],
        expert_batch=[t.expert_batch for t in fit_terms],
        expert_gemms=[t.expert_gemms for t in fit_terms], flash_attn=test.flash_attn,
        wmma_attention=[t.wmma_attention for t in fit_terms],
        context_tokens=[t.prefill_context for t in fit_terms])
    found = {i: (j, d, p) for i, j, d, p in zip(rows, q, decode, prefill)}
    out = []
    for i, (model, t, card) in enumerate(zip(models, terms, cards)):
        if i not in found:
            shown = len(quants) - 1 if floor is None else min(floor, len(quants) - 1)
            out.append(Estimate(model.name, card.name, None, context, backends[i],
                                _breakdown(t, shown, overhead[i]), usable[i], False, "no",
                                None, None, round(choice.short_by_gib[i], 2), test,
                                runtime=rt.name))
            continue
        j, d, p = found[i]
        if t.approximated:  # bytes and layers are guesses, whatever the card's calibration
            d = low_confidence(d, cal)
        # a model nobody measured: the range of its tier (novelty.py), a lower label
        d, p = with_novelty(d, p, cal, model, d.confidence, t.is_moe)
        held = None
        if rt is LLAMA_CPP:  # the held measurements are llama.cpp's
            d, held = with_measured(d, cal, card.name, model.name, quants[j], backends[i], test)
        else:
            d, p = at_level(d, rt.level), prefill_at_level(p, rt.level)
        written = d if model.generates else None  # an embedding model writes no tokens
        out.append(Estimate(model.name, card.name, quants[j], context, backends[i],
                            _breakdown(t, j, overhead[i]), usable[i], True,
                            _FIT_LABELS[choice.label[i]], written, p, None, test, held,
                            runtime=rt.name))
    return out


def _ladder(model: Model, query: Query) -> tuple[str, ...]:
    """The formats to walk: the runtime's, from its default format down when no ceiling is
    asked, with F16/BF16 on top when the ceiling asks for them (not above a native format: a
    quantized release has no unquantized file of its own)."""
    rt = _rt(query)
    formats = _formats(model, rt)
    ceiling = query.max_quality
    if ceiling is None and rt.default_format in formats:  # what the runtime downloads first
        return formats[formats.index(rt.default_format):]
    if ceiling not in ABOVE_LADDER or ceiling is None or _native(model, rt) is not None:
        return formats
    top = ceiling if isinstance(rt, LlamaCpp) else "BF16"  # own formats: BF16
    return formats if top in formats else (top, *formats)


def _with_placement(model: Model, e: Estimate, rig: Rig, query: Query) -> Estimate:
    """A single-card estimate that fits, with the placement and command that realise it."""
    if not e.fits or e.quant is None or e.placement is not None:
        return e
    from tpscalc.estimate.rig_engine import gpu_placement  # the placement code, when asked

    rt = _rt(query)
    if not isinstance(rt, LlamaCpp):  # a runtime of its own formats places no GGUF layers
        return e
    terms = _terms(model, [e.quant], query)
    return replace(e, placement=gpu_placement(model, terms, rig, query, rt),
                   offload_share=0.0)


def _on_rig(model: Model, rig: Rig, query: Query, quant: str | None,
            alone_tried: bool = False) -> Estimate:
    """A rig the single-card path does not take (several GPUs, RAM, a placement, no GPU).

    One card with system RAM answers as the card alone when the model fits it: RAM is there
    for what does not fit, so giving it never changes an answer that does (the quantization,
    the speed and its range stay those of the card's page). `alone_tried`: that answer was
    already found not to fit."""
    # The placement search and its types load here: a one-card answer needs none of them.
    from tpscalc.estimate.rig_engine import estimate_rig

    if rig.is_one_card and not alone_tried:
        alone = estimate(model, Rig.of(rig.devices[0]), query, quant, placed=False)
        if alone.fits:  # a single card's answer fits only all on the card
            return alone
    rt = _rt(query)
    terms = _rig_terms(model, query, quant)
    if rt.tensor_parallel and len(rig.devices) > 1:
        from tpscalc.estimate.tensor_parallel import estimate_tp

        return estimate_tp(model, terms, rig, query, rt)
    return estimate_rig(model, terms, rig, query, rt)


_Bounds = dict[tuple[tuple[str, ...], str | None], tuple[int | None, int | None]]


def _rig_terms(model: Model, query: Query, quant: str | None,
               bounds: _Bounds | None = None) -> _ModelTerms:
    """The terms a rig walks: of `quant`, else of the ladder within the query's bounds.
    `bounds`: the bounds found so far by (ladder, native format), the rest of what they hang on
    being the query (a report's models share a few ladders)."""
    rt = _rt(query)
    if quant is not None:
        return _terms(model, [_quant_name(quant, rt)], query)
    ladder = _ladder(model, query)
    if len(ladder) > 1:
        key = (ladder, _native(model, rt))
        found = None if bounds is None else bounds.get(key)
        if found is None:
            found = _bounds(model, ladder, query)
            if bounds is not None:
                bounds[key] = found
        top, bottom = found
        ladder = ladder[top or 0: None if bottom is None else bottom + 1]
    return _terms(model, ladder, query)


def _on_rigs(models: Sequence[Model], rigs: Sequence[Rig], query: Query) -> list[Estimate]:
    """_on_rig(models[i], rigs[i], query, None) for every row whose card alone was tried where
    that applies: each model's terms made once, the rows placed together (rig_batch)."""
    from tpscalc.estimate.rig_batch import estimate_rigs  # the placement search, when asked

    rt = _rt(query)
    if rt.tensor_parallel:
        return [_on_rig(m, r, query, None, alone_tried=True) for m, r in zip(models, rigs)]
    made: dict[int, _ModelTerms] = {}
    bounds: _Bounds = {}
    rows = []
    for m, r in zip(models, rigs, strict=True):
        t = made.get(id(m))
        if t is None:
            t = made[id(m)] = _rig_terms(m, query, None, bounds)
        rows.append((m, t, r))
    return estimate_rigs(rows, query, rt)


def estimate(model: Model, rig: Rig, query: Query, quant: str | None = None, *,
             placed: bool = True, runtime_context: bool = True) -> Estimate:
    """One model on one rig: `quant` when given, else the least compressed that fits the query.

    `placed`: the estimate carries the placement and the command that realise it (a chart
    point or a report row, which need only the figures, leave them out). `runtime_context`:
    the runtime's own default context when the query asks none (False: the query's)."""
    rt = _rt(query)
    if rt is not LLAMA_CPP:
        rig, query = for_runtime(model, rig, query, rt, runtime_context)
    if not rig.is_single_card:
        e = _on_rig(model, rig, query, quant)
    elif quant is not None:
        q = _quant_name(quant, rt)
        e = _evaluate([model], [_terms(model, [q], query)], [rig], query, (None, None))[0]
    else:
        ladder = _ladder(model, query)
        e = _evaluate([model], [_terms(model, ladder, query)], [rig], query,
                      _bounds(model, ladder, query))[0]
    if not placed:
        return e
    e = _with_placement(model, e, rig, query)
    return replace(e, run=run_command(model, e, query.kv_type))


def estimate_on_rigs(model: Model, rigs: Sequence[Rig], query: Query) -> list[Estimate]:
    """`model` on every rig, in the order of `rigs` (vectorised over single-card rigs)."""
    rt = _rt(query)
    if rt is not LLAMA_CPP:
        return _on_rigsfor_runtime(model, rigs, query, rt)
    if not all(r.is_single_card for r in rigs):
        return _on_mixed_rigs(model, rigs, query)
    ladder = _ladder(model, query)
    terms = _terms(model, ladder, query)
    return _evaluate([model] * len(rigs), [terms] * len(rigs), rigs, query,
                     _bounds(model, ladder, query))


def _on_mixed_rigs(model: Model, rigs: Sequence[Rig], query: Query) -> list[Estimate]:
    """`model` on rigs that are not all single cards: the one-card rigs (with or without RAM)
    first as cards alone, vectorised; the rig engine for the others and for what did not fit."""
    alone_at = [i for i, r in enumerate(rigs) if r.is_one_card]
    out: list[Estimate | None] = [None] * len(rigs)
    if alone_at:
        alone = estimate_on_rigs(model, [Rig.of(rigs[i].devices[0]) for i in alone_at], query)
        for i, e in zip(alone_at, alone, strict=True):
            if e.fits or rigs[i].is_single_card:
                out[i] = e
    left = [i for i, e in enumerate(out) if e is None]
    for i, e in zip(left, _on_rigs([model] * len(left), [rigs[i] for i in left], query),
                    strict=True):
        out[i] = e
    return [e for e in out if e is not None]


def estimate_models_on_rig(models: Sequence[Model], rig: Rig, query: Query) -> list[Estimate]:
    """Every model in `models` on `rig`, in the order of `models` (vectorised over the models
    that share a ladder: a model offered in its native format has its own)."""
    rt = _rt(query)
    if rig.is_one_card and not rig.is_single_card:  # the card alone first, then the RAM
        alone = estimate_models_on_rig(models, Rig.of(rig.devices[0]), query)
        if rt is not LLAMA_CPP:
            return [e if e.fits else _on_rig(m, rig, query, None, alone_tried=True)
                    for m, e in zip(models, alone, strict=True)]
        left = [i for i, e in enumerate(alone) if not e.fits]
        done = list(alone)
        for i, e in zip(left, _on_rigs([models[i] for i in left], [rig] * len(left), query),
                        strict=True):
            done[i] = e
        return done
    if not rig.is_single_card:
        if rt is not LLAMA_CPP:
            return [estimate(m, rig, query, placed=False) for m in models]
        return _on_rigs(models, [rig] * len(models), query)
    if rt is not LLAMA_CPP:
        return _modelsfor_runtime(models, rig, query, rt)
    groups: dict[tuple[tuple[str, ...], str | None], list[int]] = {}
    for i, m in enumerate(models):
        groups.setdefault((_ladder(m, query), _native(m)), []).append(i)
    out: list[Estimate | None] = [None] * len(models)
    for (ladder, _), rows in groups.items():
        some = [models[i] for i in rows]
        terms = [_terms(m, ladder, query) for m in some]
        found = _evaluate(some, terms, [rig] * len(some), query, _bounds(some[0], ladder, query))
        for i, e in zip(rows, found, strict=True):
            out[i] = e
    return [e for e in out if e is not None]


def _bounds(model: Model, ladder: Sequence[str], query: Query) -> tuple[int | None, int | None]:
    """The query's (ceiling, floor) as indexes on `model`'s own ladder: its native format (or a
    user's file) ranks with the least compressed rung, the others where the ladder has them."""
    ceiling, floor = query.ladder_bounds()
    if ceiling is None and floor is None:
        return None, None
    rt = _rt(query)
    native = _native(model, rt)
    rank = [0 if q == native else ladder_position(rt.rank(q)) for q in ladder]
    top = next((i for i, r in enumerate(rank) if ceiling is None or r >= ceiling), len(ladder))
    bottom = max((i for i, r in enumerate(rank) if floor is None or r <= floor), default=-1)
    return top, bottom


def memory_at(model: Model, quant: str, query: Query) -> MemoryBreakdown:
    """Memory `model` needs at `quant` for `query` (its context, KV type and backend), GiB."""
    rt = _rt(query)
    t = _terms(model, [_quant_name(quant, rt)], query)
    return _breakdown(t, 0, rt.overhead_bytes(query.backend or "cuda"))


def model_terms_at(model: Model, quant: str, query: Query) -> _ModelTerms:
    """The model terms of `model` at one quantization for `query` (serving.py's batched step)."""
    return _terms(model, [_quant_name(quant, _rt(query))], query)


def _on_rigsfor_runtime(model: Model, rigs: Sequence[Rig], query: Query,
                         rt: Runtime) -> list[Estimate]:
    """`model` on every rig for runtime `rt`: the rigs it runs on grouped by the query it
    makes of them (ollama's context follows the GPUs' memory), each group vectorised; a rig it
    cannot run on answers "no" with the reason in the estimate's notes (`refused`)."""
    out: list[Estimate | None] = [None] * len(rigs)
    groups: dict[Query, list[int]] = {}
    for i, r in enumerate(rigs):
        try:
            fitted, q = for_runtime(model, r, query, rt)
        except EstimateInputError as exc:
            out[i] = refused(model, r, query, rt, str(exc))
            continue
        if fitted.is_single_card:
            groups.setdefault(q, []).append(i)
        else:
            out[i] = estimate(model, r, query, placed=False)
    for q, rows in groups.items():
        ladder = _ladder(model, q)
        found = _evaluate([model] * len(rows), [_terms(model, ladder, q)] * len(rows),
                          [Rig.of(rigs[i].devices[0]) for i in rows], q,
                          _bounds(model, ladder, q))
        for i, e in zip(rows, found, strict=True):
            out[i] = e
    return [e for e in out if e is not None]


def _modelsfor_runtime(models: Sequence[Model], rig: Rig, query: Query,
                        rt: Runtime) -> list[Estimate]:
    """Every model on `rig` for runtime `rt`, in order: on one card the models grouped by the
    query the runtime makes of them (its default context follows each model's limit) and
    their ladder, each group vectorised; a rig it cannot run answers "no" (`refused`)."""
    out: list[Estimate | None] = [None] * len(models)
    groups: dict[tuple[Query, tuple[str, ...], str | None], list[int]] = {}
    card: Card | None = None
    for i, m in enumerate(models):
        try:
            fitted, q = for_runtime(m, rig, query, rt)
        except EstimateInputError as exc:
            out[i] = refused(m, rig, query, rt, str(exc))
            continue
        if not fitted.is_single_card:
            out[i] = _row(m, rig, query, rt)
            continue
        card = fitted.devices[0]
        groups.setdefault((q, _ladder(m, q), _native(m, rt)), []).append(i)
    for (q, ladder, _), rows in groups.items():
        assert card is not None  # a group holds a single card's rows
        some = [models[i] for i in rows]
        found = _evaluate(some, [_terms(m, ladder, q) for m in some],
                          [Rig.of(card)] * len(some), q, _bounds(some[0], ladder, q))
        for i, e in zip(rows, found, strict=True):
            out[i] = e
    return [e for e in out if e is not None]


def _row(model: Model, rig: Rig, query: Query, rt: Runtime) -> Estimate:
    """A report row of `model` on `rig` for runtime `rt`: "no" with the reason where the
    runtime cannot run there."""
    try:
        return estimate(model, rig, query, placed=False)
    except EstimateInputError as exc:
        if exc.code not in ("runtime_unsupported", "bad_rig", "bad_tensor_parallel"):
            raise
        return refused(model, rig, query, rt, str(exc))


def compare_runtimes(model: Model, rig: Rig, query: Query) -> list[Estimate]:
    """`model` on `rig` under every runtime that can run it, at the query's context and
    speed test, fastest decode first (those that do not fit after them)."""
    out = []
    for name in RUNTIME_NAMES:
        try:
            out.append(estimate(model, rig, replace(query, runtime=name), placed=False,
                                runtime_context=False))
        except EstimateInputError:  # a runtime this rig cannot run
            continue
    return sorted(out, key=lambda e: -(e.decode.tokens_per_s if e.decode and e.fits else -1.0))
