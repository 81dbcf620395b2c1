"""The Python API: one estimate as a dict, and the two reports as data.

Every function parses its keyword arguments with the same rules as the site and the CLI
(`tpscalc.report.request`), so a value the site refuses is refused here with the same message.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from tpscalc.catalog import Card, Model
from tpscalc.catalog.lookup import NameNotFoundError
from tpscalc.estimate.query import (
    DEFAULT_CONTEXT,
    DEFAULT_MIN_QUALITY,
    EstimateInputError,
    Query,
    Rig,
    query_for_model,
)
from tpscalc.report import card_report as card_builder
from tpscalc.report import choice, common
from tpscalc.report import model_report as model_builder
from tpscalc.report.common import estimate_json, runtime_row_json
from tpscalc.report.model_types import ModelReport
from tpscalc.report.quality import quality_json
from tpscalc.report.request import (
    CARD_REPORT_PARAMS,
    ESTIMATE_PARAMS,
    MODEL_REPORT_PARAMS,
    PARAM,
    SPEED_TEST_PARAMS,
    ReportRequest,
    parse_quant,
    parse_request,
    parse_tokens,
)
from tpscalc.report.rigs import build_rig, host_json, is_rig_text
from tpscalc.report.serialize import report_json
from tpscalc.report.types import CardReport
from tpscalc.sources import SourcedModel, SourceError
from tpscalc.sources.load import sourced_model

if TYPE_CHECKING:  # machine detection and the Hub client load when used (`tpscalc estimate`
    # with a catalog model and card needs neither), pathlib with a file
    from pathlib import Path

    from tpscalc.machine import Machine
    from tpscalc.sources.hub import Hub

# Exception types that mean bad user input (one line and exit code 2 in the CLI, 4xx on the web).
INPUT_ERRORS: tuple[type[Exception], ...] = (EstimateInputError, NameNotFoundError)

__all__ = ["INPUT_ERRORS", "card_report", "check_file_request", "detect_machine",
           "estimate_options", "evaluate", "evaluate_many", "iter_evaluate", "machine_json",
           "model_report", "report_json", "sourced_model"]


def evaluate(model: str | None, card: str | Card | Rig, quant: str | None = None,
             context: object = DEFAULT_CONTEXT, backend: str | None = None,
             kv_type: str | None = "f16", *, gguf: str | Path | None = None,
             config: str | Path | None = None, config_index: str | Path | None = None,
             hf: str | None = None, hub: Hub | None = None, compare: bool = True,
             **opts: object) -> dict[str, Any]:
    """`model` on `card`: memory (GiB), fit, decode and prefill speed (tok/s); raises on bad input.

    opts: min_quality and max_quality bound the quantization chosen when `quant` is not given.
    gguf / config (+ config_index, a model.safetensors.index.json) / hf (a Hub repository id,
    read through `hub`, the real Hub when None): the model from that file instead of the
    catalog (model None); the result then says where each fact came from. compare: add
    `runtimes`, the pair under every runtime that runs it at the same context, fastest first.
    """
    raw = {"context": context, "backend": backend, "kv_type": kv_type, **opts}
    request = parse_request(raw, ESTIMATE_PARAMS, strict=True)
    fixed = parse_quant(quant)
    sm = sourced_model(model, gguf=gguf, config=config, config_index=config_index, hf=hf,
                       hub=hub)
    # A whole rig (this machine's, tpscalc.detect_machine()), or one from a card, a rig text
    # ("2x …", "A + B", "none") and the request's RAM and placement.
    rig = card if isinstance(card, Rig) else lambda: build_rig(card, request.rig)
    out = _evaluate_sourced(sm, rig, request, fixed, str(gguf) if gguf is not None else None,
                            compare, from_file=model is None)
    if (out["fits"] is False or out["fit"] == "paging") and not isinstance(card, Rig):
        out["to_fit"] = ways_to_fit(sm, card, request, fixed, out)
    if model is None:  # facts from the user's file: say which came from where
        out["sources"] = {**sm.sources, "card": "catalog"}
    elif sm.resolved_as is not None:  # a repository id, a fine-tune, an ollama tag ...
        out["resolved_as"] = sm.resolved_as
    return out


# The RAM sizes "does not fit" offers, GiB: the site's "system RAM" choices and 512 for the rest.
RAM_CHOICES_GIB = (32, 64, 128, 256, 512)


def ways_to_fit(sm: SourcedModel, card: str | Card, request: ReportRequest, fixed: str | None,
                failed: Mapping[str, Any]) -> list[dict[str, Any]]:
    """What would make a model that does not fit run, each with the answer it gives: the most
    compressed quantization, a quarter of the context, a second card, system RAM (the
    smallest of RAM_CHOICES_GIB that holds the shortfall). Only the changes that fit; for an
    answer that pages from storage (`failed["fit"]` "paging"), only those that run without
    paging (a more compressed format that the RAM holds is the usual one)."""
    rig_opts, query = request.rig, request.query
    paging = failed["fit"] == "paging"
    shortfall = float(failed.get("short_by_gib") or failed["memory"]["total_gib"])
    ram = next((g for g in RAM_CHOICES_GIB if g >= 1.5 * shortfall), None)
    changes: list[tuple[str, ReportRequest, str | None]] = []
    if fixed is None and query.min_quality != "IQ2_XXS":
        changes.append(("quant", replace(request, query=replace(query, min_quality="IQ2_XXS")),
                        None))
    if query.context > 1024:
        changes.append(("context", replace(request, query=replace(
            query, context=max(1024, query.context // 4))), fixed))
    if not is_rig_text(str(card)) and (rig_opts.gpus or 1) < 2:
        changes.append(("gpus", replace(request, rig=replace(rig_opts, gpus=2)), fixed))
    if ram is not None and rig_opts.ram_gib is None:
        changes.append(("ram", replace(request, rig=replace(rig_opts, ram_gib=float(ram))),
                        fixed))
    out = []
    for what, changed, quant in changes:
        try:
            answer = _evaluate_sourced(sm, build_rig(card, changed.rig), changed, quant)
        except INPUT_ERRORS:
            continue
        if answer["fits"] and not (paging and answer["fit"] == "paging"):
            decode = answer["decode"] or {}
            out.append({"change": what, "quant": answer["quant"], "context": answer["context"],
                        "gpus": changed.rig.gpus or 1, "ram_gib": changed.rig.ram_gib,
                        "fit": answer["fit"], "decode_tokens_per_s": decode.get("tokens_per_s")})
    return out


def _evaluate_sourced(sm: SourcedModel, rig: Rig | Callable[[], Rig], request: ReportRequest,
                      fixed: str | None, model_file: str | None = None,
                      compare: bool = False, from_file: bool = False) -> dict[str, Any]:
    """The estimate JSON of a resolved model on a rig (or what builds it, once the request
    holds for the model: a bad context is reported before an unknown card)."""
    fixed = check_file_request(sm, request, fixed)
    query = query_for_model(sm.model, request.query)
    built = rig if isinstance(rig, Rig) else rig()
    out = _estimate_out(sm, built, query, fixed, request, model_file, compare, from_file)
    if built.notes:  # e.g. a chip's variant taken for its name ("M4 Max"): said, not silent
        out["notes"] = list(built.notes)
    return out


def _estimate_out(sm: SourcedModel, built: Rig, query: Query, fixed: str | None,
                  request: ReportRequest, model_file: str | None, compare: bool,
                  from_file: bool) -> dict[str, Any]:
    """The estimate JSON of `_evaluate_sourced`, before the rig's notes."""
    if not request.serving.is_default:  # many users, or a draft: the serving layer builds on it
        return _serving(sm.model, built, query, fixed, request, sm.sources if from_file else None)
    engine = common.default_engine()
    result = engine.estimate(sm.model, built, query, fixed)
    if fixed is None:  # --prefer / --min-tps: another of the quantizations that fit
        result = choice.rechoose_one(sm.model, result, query, request.filters,
                                     lambda q: engine.estimate(sm.model, built, q, None))
    out = estimate_json(common.within_measured_confidence(result), model_file)
    held = host_json(built, result)
    if held is not None:  # which OS, headroom and GPU share the answer assumed
        out["host"] = held
    out["quality"] = quality_json(sm.model, result.quant)
    if compare and fixed is None and result.fits:  # which runtime is fastest on this pair
        same = replace(query, context=result.context)
        out["runtimes"] = [runtime_row_json(e) for e in engine.compare_runtimes(sm.model, built,
                                                                                same)]
    return out


def _serving(model: Model, rig: Rig, query: Query, quant: str | None, request: ReportRequest,
             sources: Mapping[str, str] | None) -> dict[str, Any]:
    """The estimate with its `serving` block (estimate/serving.py) and, with a draft or MTP,
    its `speculative` block (estimate/speculative.py)."""
    from tpscalc.estimate.serving import serving_estimate
    from tpscalc.report.serving import serving_json

    opts = request.serving
    s = serving_estimate(model, rig, query, opts.parallel or 1, quant, opts.users_at)
    out = estimate_json(s.estimate)
    if opts.parallel is not None or opts.users_at is not None:
        out["serving"] = serving_json(s)
    if opts.draft or opts.mtp:
        from tpscalc.report.speculative import speculative_json

        out["speculative"] = speculative_json(model, rig, query, s.estimate, opts.draft,
                                              opts.mtp)
    if sources is not None:  # facts from the user's file: say which came from where
        out["sources"] = {**sources, "card": "catalog"}
    return out


def check_file_request(sm: SourcedModel, request: ReportRequest,
                       quant: str | None = None) -> str | None:
    """The quantization to ask for: a GGUF holds one, so another one or quality bounds are
    refused for it (SourceError)."""
    fw = sm.model.file_weights
    if fw is None:
        return quant
    q = request.query
    floor_given = q.min_quality not in (None, DEFAULT_MIN_QUALITY)  # the default floor: no ask
    if (quant is not None and quant != fw.format) or floor_given or q.max_quality:
        raise SourceError(f"{fw.source} holds {fw.format} weights; --quant and the quality "
                          "bounds do not apply to a GGUF file", "bad_quant")
    return None


def evaluate_many(requests: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One dict per request, in order; a request with bad input gets its message under `error`
    and empty figures.

    Keys: model, card (or gpu), quant, context, backend, kv_type, text_only, and the speed test
    n_prompt, n_gen, depth, flash_attn, n_ubatch (llama-bench's -p -n -d -fa -ub). Without a
    context, a request with a test gets one that holds it (depth + the longer of n_prompt and
    n_gen), so any llama-bench row replays as it was run.
    """
    return list(iter_evaluate(requests))


def iter_evaluate(requests: Iterable[Mapping[str, Any]]) -> Iterator[dict[str, Any]]:
    """`evaluate_many`, one result at a time as each is computed (a long CSV streams); each
    distinct model name, card and request is resolved once (_Batch)."""
    batch = _Batch()
    for req in requests:
        try:
            yield batch.evaluate(req)
        except INPUT_ERRORS as exc:
            yield _error_row(req, str(exc))


class _Batch:
    """evaluate() for many requests, each distinct model name, card (or rig) and request
    resolved once: a CSV of 100k rows names a few dozen models and cards (issue 27: resolving
    each row's names against the 966 catalog names took half the time). An identical request
    reuses its answer (a shallow copy)."""

    def __init__(self) -> None:
        self.models: dict[str, SourcedModel | Exception] = {}
        self.rigs: dict[tuple[str, object], Rig | Exception] = {}
        self.answers: dict[tuple[object, ...], dict[str, Any]] = {}

    def evaluate(self, req: Mapping[str, Any]) -> dict[str, Any]:
        options = estimate_options(req)
        model, card = str(req.get("model") or ""), str(_card_of(req) or "")
        quant = req.get("quant") or None
        key = (model, card, quant, tuple(sorted((k, str(v)) for k, v in options.items())))
        known = self.answers.get(key)
        if known is None:
            raw = {"context": DEFAULT_CONTEXT, "backend": None, "kv_type": "f16", **options}
            request = parse_request(raw, ESTIMATE_PARAMS, strict=True)
            fixed = parse_quant(quant)
            sm = _once(self.models, model, lambda: sourced_model(model))
            def rig() -> Rig:
                return _once(self.rigs, (card, request.rig),  # type: ignore[no-any-return]
                             lambda: build_rig(card, request.rig))

            known = self.answers[key] = _evaluate_sourced(sm, rig, request, fixed)
        return dict(known)


def _once(memo: dict[Any, Any], key: object, make: Callable[[], Any]) -> Any:
    """memo[key], made by `make` the first time; an input error is kept and raised again."""
    if key not in memo:
        try:
            memo[key] = make()
        except INPUT_ERRORS as exc:
            memo[key] = exc
    found = memo[key]
    if isinstance(found, Exception):
        raise found
    return found


def estimate_options(req: Mapping[str, Any]) -> dict[str, Any]:
    """The estimate options `req` gives (every field of ESTIMATE_PARAMS, by name or alias,
    blanks left out) for `evaluate`; without a context, a speed test gets one that holds it."""
    options = {k: req[k] for k in ESTIMATE_KEYS if req.get(k) not in (None, "")}
    if "context" not in options and SPEED_TEST_KEYS & options.keys():
        options["context"] = max(DEFAULT_CONTEXT, _tokens_needed(options))
    return options


SPEED_TEST_KEYS = frozenset(SPEED_TEST_PARAMS)
# The estimate fields by name or alias (a CSV column ram_gib is the option ram).
ESTIMATE_KEYS = tuple(k for n in ESTIMATE_PARAMS for k in (n, *PARAM[n].aliases))


def _tokens_needed(options: Mapping[str, Any]) -> int:
    """The context a llama-bench row needs: its depth plus its longer test."""
    depth, prompt, gen = (parse_tokens(options.get(k) or 0, k)
                          for k in ("depth", "n_prompt", "n_gen"))
    return depth + max(prompt, gen)


def _card_of(req: Mapping[str, Any]) -> Any:
    """The card a request names: `card`, or its alias `gpu`."""
    return req.get("card") or req.get("gpu")


def _context_or_none(raw: object) -> int | None:
    """The context of a failed request as a whole number, as good rows give it (None if bad)."""
    try:
        return parse_tokens(raw) if raw not in (None, "") else DEFAULT_CONTEXT
    except EstimateInputError:
        return None


def _error_row(req: Mapping[str, Any], message: str) -> dict[str, Any]:
    """The estimate shape with every figure empty and `error` set."""
    return {"model": req.get("model"), "gpu": _card_of(req), "quant": req.get("quant") or None,
            "context": _context_or_none(req.get("context")),
            "backend": req.get("backend") or None,
            "memory": None, "fits": None, "fit": None, "decode": None, "prefill": None,
            "short_by_gib": None, "test": None, "measured": None, "error": message,
            "runtime": req.get("runtime") or None, "tensor_parallel": None, "run": None}


def model_report(name: str | None, *, gguf: str | Path | None = None,
                 config: str | Path | None = None, config_index: str | Path | None = None,
                 hf: str | None = None, hub: Hub | None = None,
                 **opts: object) -> ModelReport:
    """The model report (every card).

    Options as `tpscalc model` (context, min_quality, lang, ...); gguf / config (+ config_index)
    / hf: the model from that file instead of the catalog.
    """
    request = parse_request(opts, MODEL_REPORT_PARAMS, strict=True)
    if name is not None and not (gguf or config or hf):
        return model_builder.model_report(name, request)
    sm = sourced_model(name, gguf=gguf, config=config, config_index=config_index, hf=hf,
                       hub=hub)
    check_file_request(sm, request)
    return model_builder.build_model_report(sm.model, request)


def card_report(name: str, **opts: object) -> CardReport:
    """The card report (every model).

    Options as `tpscalc card` (context, min_quality, sort, ...).
    """
    request = parse_request(opts, CARD_REPORT_PARAMS, strict=True)
    return card_builder.card_report(name, request)


def machine_json(machine: Machine) -> dict[str, Any]:
    """`machine` as JSON data (tpscalc.machine.detect.machine_json)."""
    from tpscalc.machine.detect import machine_json as to_json

    return to_json(machine)


def detect_machine() -> Machine:
    """This machine: its GPUs matched to catalog cards, RAM, CPU, and the rig they make."""
    from tpscalc.machine import detect

    return detect()
