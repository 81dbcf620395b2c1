"""One model on a rig of several GPUs, GPUs plus system RAM, or the CPU alone.

The engine (engine.py) answers every rig from one set of model terms (model_terms.py, made
once per model and query) and one memory breakdown (memory.breakdown): a single card all on
its GPU through its vectorised path, every other rig (several devices, system RAM, a user
placement, no GPU) here, each device reading its share of the same terms through the same
speed functions (a one-device rig all on its GPU gives the single card's answer). Memory comes from
`placement.place` (llama.cpp's --fit); speed from the sum of the stages a token passes:
    t(decode) = Σ_devices (bytes read there / (η × bandwidth) + fixed costs)
                + bytes read from RAM / (η_RAM × RAM bandwidth) + CPU per-token cost
                + (stages − 1) × the latency of one hand-over between devices (HOP_US)
    t(prefill) = Σ_devices (their share of the prompt's compute)
                 + passes × CPU-resident weights / PCIe bandwidth   (partial offload: llama.cpp
                 copies the CPU weights to the GPU for each large batch)
    t(prefill, CPU only) = prompt FLOPs / CPU FLOPS
With the host's CPU known (Rig.cpu) its RAM term is read at the least of RAM, CPU-complex and
core rates, and its prompt FLOPS come from its cores (cpu_speed.py); without, as stated below.
The sums themselves are rig_stages.py's formulas (one row's floats here, columns in rig_batch).
"""
from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from tpscalc.catalog.schema import Architecture, Model
from tpscalc.estimate import cpu_speed, host, speed
from tpscalc.estimate import memory as mem
from tpscalc.estimate.answer import at_level, low_confidence, prefill_at_level, with_measured
from tpscalc.estimate.calibration import Calibration
from tpscalc.estimate.calibration_store import calibration
from tpscalc.estimate.model_terms import ModelTerms
from tpscalc.estimate.novelty import with_novelty
from tpscalc.estimate.placement import (
    DeviceSlot,
    ModelLayout,
    Placement,
    UserPlacement,
    place,
)
from tpscalc.estimate.query import Query, Rig
from tpscalc.estimate.rig_stages import (
    DEFAULT_PCIE_GB_S,
    HOST_BOUNDS,
    PCIE_EFFICIENCY,
    RIG_BAND,
    cpu_part_figures,
    decode_figures,
    prefill_figures,
)
from tpscalc.estimate.runtime import LLAMA_CPP, Runtime
from tpscalc.estimate.sycl_kernels import kernel_read_factors
from tpscalc.estimate.tensors import parameter_counts
from tpscalc.estimate.types import (
    UNQUANTIZED,
    Bound,
    Confidence,
    DecodeEstimate,
    Estimate,
    FitLabel,
    MemoryBreakdown,
    Paging,
    PrefillEstimate,
)
from tpscalc.estimate.weights import role_bytes, weights_bytes

GIB = 2**30
# Share of the RAM's spec bandwidth the CPU streams weights at (stated in cpu_speed.py).
RAM_EFFICIENCY = cpu_speed.RAM_EFFICIENCY
# Effective CPU rate of llama.cpp's quantized matrix kernels for a prompt: an assumed
# 1 TFLOPS (a desktop 8-16 core CPU with AVX2/AVX-512), not fitted.
CPU_TFLOPS = 1.0
_CONFIDENCE_ORDER: tuple[Confidence, ...] = ("low", "medium", "high")
_CONFIDENCE_RANK: dict[str, int] = {c: i for i, c in enumerate(_CONFIDENCE_ORDER)}


@dataclass(frozen=True)
class _Layout:
    """A model at one quant on a rig's terms: stored, read and expert bytes."""

    model: ModelLayout
    weights: float  # stored, bytes
    read: float  # read per generated token, bytes
    output_read: float
    expert_read_per_layer: float  # active expert bytes of one layer read per token
    arch: Architecture  # the architecture the bytes were split by


@functools.lru_cache(maxsize=4096)
def _roles(arch: Architecture, quant: str) -> dict[str, float]:
    """Stored bytes by placement role (cached: a report places one model on every card)."""
    try:
        return role_bytes(arch, quant)
    except (KeyError, ValueError):  # a format the tensor rules do not know: Q8_0's shares
        return role_bytes(arch, "Q8_0") | {"total": float(weights_bytes(arch, "Q8_0"))}


@functools.lru_cache(maxsize=4096)
def _parameters(arch: Architecture) -> float:
    """All parameters of `arch` (cached like `_roles`)."""
    return float(parameter_counts(arch)[0])


def _layout(arch: Architecture, quant: str, weights: float, read: float, kv: float,
            query: Query, context: int) -> _Layout:
    # kv: the cache at `context` (the terms' kv or kv_doubled)
    """Split the runtime's byte totals into llama.cpp's placement units by the tensors' roles."""
    roles = _roles(arch, quant)
    emb, out, experts = roles["embedding"], roles["output"], roles["experts"]
    if "total" in roles or emb + out > weights:  # Q8_0's shares, or a user's smaller file
        total = roles.get("total") or (emb + out + experts) or 1.0
        emb, out, experts = (x * weights / total for x in (emb, out, experts))
    layers = weights - emb - out  # the repeating layers, experts included
    n = arch.num_layers
    experts = min(experts, layers)
    per_weight = weights / params if (params := _parameters(arch)) > 0 else 0.0
    copied = mem.offload_buffer_bytes(arch, per_weight)
    copy = emb if arch.tied_embeddings else 0.0  # the output head reads token_embd's copy
    m = ModelLayout(n, layers / n, experts / n, kv / n, out, emb,
                    mem.offload_buffer_growth(arch, context, query.test.n_ubatch,
                                              query.test.flash_attn, copied), copy)
    active = ((arch.num_experts_active or 0) / arch.num_experts
              if arch.num_experts else 0.0)
    return _Layout(m, weights, read, (out + copy) * read / weights if weights else 0.0,
                   experts / n * active, arch)


# (id(terms), format index, doubled) -> (terms, layout): a layout depends on the model's
# terms and the query only, not on the card, so a report placing one model on every card (or
# every model on one rig's card) splits its bytes once. The terms are kept so an id is never
# reused; emptied when full.
_LAYOUTS: dict[tuple[int, int, bool], tuple[ModelTerms, _Layout]] = {}
LAYOUTS_MEMO_SIZE = 4096


def _shared_layout(arch: Architecture, terms: ModelTerms, j: int, query: Query,
                   doubled: bool) -> _Layout:
    """_layout of format j of `terms` at the query's context (or twice it), memoised."""
    key = (id(terms), j, doubled)
    held = _LAYOUTS.get(key)
    if held is not None and held[0] is terms:  # the same terms: the same query inputs
        return held[1]
    kv, context = ((terms.kv_doubled, 2 * query.context) if doubled
                   else (terms.kv, query.context))
    lay = _layout(arch, terms.quants[j], terms.weights[j], terms.read_per_token[j], kv, query,
                  context)
    if len(_LAYOUTS) >= LAYOUTS_MEMO_SIZE:
        _LAYOUTS.clear()
    _LAYOUTS[key] = (terms, lay)
    return lay


def _slots(rig: Rig, query: Query, runtime: Runtime, compute: float,
           vision: float) -> list[DeviceSlot]:
    """Each GPU's usable memory and fixed bytes: its compute buffer (`compute`, bytes) and the
    backend's overhead; the image encoder (`vision`) on the first, the main GPU, where llama.cpp
    loads the --mmproj file."""
    return [DeviceSlot(c.name, c.usable_memory_gib * GIB,
                       compute + (vision if i == 0 else 0.0)
                       + runtime.overhead_bytes(query.backend or runtime.default_backend(c)))
            for i, c in enumerate(rig.devices)]


def _user(rig: Rig) -> UserPlacement:
    return UserPlacement(rig.n_gpu_layers, rig.n_cpu_moe, rig.tensor_split)


def _label(p: Placement, doubled: Callable[[], Placement], rig: Rig,
           lay: _Layout) -> FitLabel:
    """The fit of `p`; `doubled` places the model at twice the context (asked for only when `p`
    is all on the GPUs: comfortable if that still is)."""
    if not p.fits:  # the GPUs hold their share and only the RAM is short: it may page
        return "paging" if _pages(p, rig, lay) else "no"
    if not rig.devices:
        return "cpu"
    if p.cpu_layers or p.cpu_expert_layers:
        return "offload"
    p2 = doubled()
    return "comfortable" if p2.fits and not (p2.cpu_layers or p2.cpu_expert_layers) else "tight"


def _pages(p: Placement, rig: Rig, lay: _Layout) -> bool:
    """Whether `p` fails only for the RAM and still runs paging (host.CpuPart.pages): llama.cpp
    keeps its CPU part memory-mapped from the file, the kernel re-reading what it evicts."""
    return (rig.ram_gib is not None and all(d.fits for d in p.devices)
            and _cpu_part(lay, p, 0.0, rig).pages())


def _usable_ram_bytes(rig: Rig) -> float | None:
    """The RAM a placement may fill, bytes: the RAM less the OS's headroom; None when unknown
    or on a unified-memory machine (the RAM is the GPU's pool there: no offload)."""
    if rig.usable_ram_gib is None or any(c.unified_memory for c in rig.devices):
        return None
    return rig.usable_ram_gib * GIB


def estimate_rig(model: Model, terms: ModelTerms, rig: Rig, query: Query,
                 runtime: Runtime) -> Estimate:
    """`model` on `rig`: the least compressed of the terms' formats all on the GPUs, else the
    least compressed that fits with offload (or on the CPU): the seed's rule, as on one card
    (`--prefer speed` or `--min-tps` chooses a more compressed one, report/choice.py); formats
    least compressed first (the most compressed is the quality floor)."""
    arch = model.architecture or mem.approx_architecture(model.parameters_total)
    slots = _slots(rig, query, runtime, terms.compute, terms.vision)
    slots2 = _slots(rig, query, runtime, terms.compute_doubled, terms.vision)
    ram = _usable_ram_bytes(rig)
    tried = []
    for j, q in enumerate(terms.quants):
        lay = _shared_layout(arch, terms, j, query, False)
        p = place(lay.model, slots, ram, _user(rig))
        doubled = _shared_layout(arch, terms, j, query, True).model
        label = _label(p, functools.partial(place, doubled, slots2, ram, _user(rig)), rig, lay)
        tried.append((j, lay, p, label))
        if label in ("comfortable", "tight"):
            break
    j, lay, p, label = pick(tried)
    speeds = device_speeds(terms, terms.quants[j], lay, p, rig, query, calibration())
    return estimate_placed(model, arch, terms, j, lay, p, label, rig, query, runtime, speeds)


T = TypeVar("T")


def pick(tried: Sequence[tuple[int, _Layout, T, FitLabel]]) -> tuple[int, _Layout, T, FitLabel]:
    """Of the formats tried in order, the one a rig runs: the first all on the GPUs, else the
    first that fits with offload, else the last that pages (the least to re-read), else the
    last tried (it does not fit)."""
    on_gpus = [t for t in tried if t[3] in ("comfortable", "tight")]
    offloaded = [t for t in tried if t[3] in ("offload", "cpu")]
    # paging only when nothing fits the RAM: the most compressed, the least to re-read
    paging = [t for t in tried if t[3] == "paging"][-1:]
    return (on_gpus or offloaded or paging or tried[-1:])[0]


def gpu_placement(model: Model, terms: ModelTerms, rig: Rig, query: Query,
                  runtime: Runtime) -> Placement:
    """Every layer of `model` at the terms' one format on the rig's GPUs and the output layer
    with them: what a single-card answer that fits runs (`-ngl` all layers + 1, as given, so
    llama.cpp's --fit keeps it)."""
    arch = model.architecture or mem.approx_architecture(model.parameters_total)
    lay = _shared_layout(arch, terms, 0, query, False)
    slots = _slots(rig, query, runtime, terms.compute, terms.vision)
    return place(lay.model, slots, None, UserPlacement(arch.num_layers + 1, None, None))


def placed_figures(terms: ModelTerms, j: int, lay: _Layout, p: Placement
                   ) -> tuple[MemoryBreakdown, float]:
    """The memory breakdown and offload share of format j placed as `p` (the same for every
    placement of the same numbers, whatever its devices' names)."""
    return _memory(terms, j, p), round(p.offload_share(lay.weights), 3)


def _memory(terms: ModelTerms, j: int, p: Placement) -> MemoryBreakdown:
    """The rig's breakdown, built as a single card's (memory.breakdown): the file's weights
    (the placement shows where each byte sits, a tied output head's GPU copy included), the KV
    cache wherever it lives, every device's buffers and the encoder on the main GPU."""
    vision = terms.vision if p.devices else 0.0
    buffers = sum(d.buffer_bytes for d in p.devices) - vision
    kv = sum(d.kv_bytes for d in p.devices) + p.cpu_kv_bytes
    return mem.breakdown(float(terms.weights[j]), kv, buffers, vision, terms.approximated)


@dataclass(frozen=True)
class DeviceSpeeds:
    """One placed row's device estimates: decode on each device that holds part of the model,
    prefill on each that runs part of the prompt (None where its TFLOPS are unknown)."""

    decode: list[DecodeEstimate]
    prefill: list[PrefillEstimate | None]


def _shares(t: ModelTerms, q: str, lay: _Layout, p: Placement, backend: str | None
            ) -> tuple[list[tuple[int, dict[str, Any]]], list[tuple[int, dict[str, Any]]]]:
    """One placed row's device rows of the speed calls under `backend`, each (its device's
    index, its share of the model's terms as speed.decode_estimates' and
    speed.prefill_estimates' keywords): a column is one entry here."""
    n = lay.model.n_layers
    factor, slowest = kernel_read_factors(lay.arch, q, backend)
    decode = []
    for i, (dev, r) in enumerate(zip(p.devices, _device_reads(lay, p))):
        if dev.layers or r > 0:
            s = dev.layers / n
            decode.append((i, {"read_bytes_per_token": r, "kv_bytes_at_context": t.kv_decode * s,
                               "n_layers": dev.layers, "params_read": t.params_active * s,
                               "attention_flops": t.attention_decode * s,
                               "expert_matrices": t.expert_matrices * s, "quant": q,
                               "depth_tokens": t.decode_depth,
                               "expert_params": t.expert_params * s,
                               "read_factor": factor, "read_factor_slowest": slowest}))
    # Every layer's prompt work runs on a GPU (llama.cpp sends large batches of CPU layers
    # to the main GPU); each device does its share.
    quantized = q not in UNQUANTIZED
    prefill = []
    for i, dev in enumerate(p.devices):
        if k := dev.layers + (p.cpu_layers if i == 0 else 0):
            s = k / n
            prefill.append((i, {"flops_per_token": t.flops_per_token * s,
                                "weights_bytes": lay.weights * s,
                                "attention_flops_per_token": t.attention_prefill * s,
                                "expert_params": t.expert_params * s,
                                "expert_batch": t.expert_batch,
                                "expert_gemms": t.expert_gemms * s, "quantized": quantized,
                                "bf16": q == "BF16", "wmma_attention": t.wmma_attention,
                                "context_tokens": t.prefill_context}))
    return decode, prefill


def _keywords(shares: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Devices' shares as a speed call's keywords: one list per share."""
    return {k: [share[k] for share in shares] for k in shares[0]}


def device_speeds(t: ModelTerms, q: str, lay: _Layout, p: Placement, rig: Rig, query: Query,
                  cal: Calibration) -> DeviceSpeeds:
    """The device estimates of one placed row (terms, format, layout, placement, rig): each
    device its share of the terms (_shares) at its own calibrated rate, from one
    speed.decode_estimates and one speed.prefill_estimates call over its devices (the single
    card's functions; rig_batch._device_speeds: the same over numpy columns of many rows)."""
    decode, prefill = _shares(t, q, lay, p, query.backend)
    test = query.test
    return DeviceSpeeds(
        speed.decode_estimates(
            cards=[rig.devices[i] for i, _ in decode], backend=query.backend, cal=cal,
            **_keywords([share for _, share in decode])) if decode else [],
        speed.prefill_estimates(
            prompt_tokens=test.n_prompt, cards=[rig.devices[i] for i, _ in prefill],
            backend=query.backend, cal=cal, ubatch=test.n_ubatch, flash_attn=test.flash_attn,
            **_keywords([share for _, share in prefill])) if prefill else [])


def estimate_placed(model: Model, arch: Architecture, terms: ModelTerms, j: int, lay: _Layout,
                    p: Placement, label: FitLabel, rig: Rig, query: Query, runtime: Runtime,
                    speeds: DeviceSpeeds,
                    composed: tuple[DecodeEstimate, PrefillEstimate | None] | None = None,
                    placed: tuple[MemoryBreakdown, float] | None = None) -> Estimate:
    """The estimate of `model` at format j placed as `p` on `rig`, from its device speeds, or
    from the speeds already `composed` (rig_batch: over every row at once, the (decode,
    prefill) that _decode and _prefill give, then `tiered`)."""
    backend = ("cpu" if not rig.devices
               else query.backend or runtime.default_backend(rig.devices[0]))
    q = terms.quants[j]
    memory, offload = placed or placed_figures(terms, j, lay, p)
    name = rig.name
    if label == "no":
        short = sum(max(0.0, d.total_bytes + d.margin_bytes - d.usable_bytes) for d in p.devices)
        if rig.usable_ram_gib is not None:
            short += max(0.0, p.cpu_weights_bytes + p.cpu_kv_bytes - rig.usable_ram_gib * GIB)
        return Estimate(model.name, name, None, query.context, backend, memory,
                        _usable_gib(rig), False, "no", None, None,
                        round(short / GIB, 2), query.test, placement=p,
                        offload_share=offload,
                        runtime=runtime.name)
    cal = calibration()
    if composed is None:
        part = _cpu_part(lay, p, terms.kv_decode, rig)  # in RAM: decode, prompt, paging
        decode, prefill = tiered(_decode(terms, q, part, rig, cal, speeds.decode),
                                 _prefill(terms, p, part, rig, query, speeds.prefill),
                                 model, terms, cal)
    else:
        decode, prefill = composed
    held = None
    if runtime is LLAMA_CPP:  # the held measurements are llama.cpp's
        decode, held = with_measured(decode, cal, name, model.name, q, backend, query.test)
    else:  # llama.cpp underneath (ollama, LM Studio, llamafile): at the runtime's level
        decode, prefill = at_level(decode, runtime.level), prefill_at_level(prefill,
                                                                            runtime.level)
    return Estimate(model.name, name, q, query.context, backend, memory, _usable_gib(rig),
                    True, label, decode if _generates(model) else None, prefill, None,
                    query.test, held, placement=p,
                    offload_share=offload, runtime=runtime.name,
                    paging=_paging(_cpu_part(lay, p, terms.kv_decode, rig), p, rig)
                    if label == "paging" else None)


# id(model) -> (model, Model.generates): a report's rows ask it of one model ~850 times (a
# card report of ~1,000 models once each); the model is kept so an id is never reused
_GENERATES: dict[int, tuple[Model, bool]] = {}


def _generates(model: Model) -> bool:
    """model.generates, memoised."""
    held = _GENERATES.get(id(model))
    if held is not None and held[0] is model:
        return held[1]
    if len(_GENERATES) >= LAYOUTS_MEMO_SIZE:
        _GENERATES.clear()
    _GENERATES[id(model)] = (model, model.generates)
    return model.generates


def tiered(decode: DecodeEstimate, prefill: PrefillEstimate | None, model: Model,
           terms: ModelTerms, cal: Calibration
           ) -> tuple[DecodeEstimate, PrefillEstimate | None]:
    """A rig's composed speeds as the answer gives them: a guessed model's low confidence, and
    a model nobody measured at the range of its tier (novelty.py), a lower label."""
    if terms.approximated:  # bytes and layers are guesses, whatever the card's calibration
        decode = low_confidence(decode, cal)
    return with_novelty(decode, prefill, cal, model, decode.confidence, terms.is_moe)


def _usable_gib(rig: Rig) -> float:
    return sum(c.usable_memory_gib for c in rig.devices) + (rig.usable_ram_gib or 0.0)


def _device_reads(lay: _Layout, p: Placement) -> list[float]:
    """Weight bytes each device reads per generated token."""
    n = lay.model.n_layers
    experts_on_cpu = p.cpu_layers + p.cpu_expert_layers if p.cpu_expert_layers else 0
    if len(p.devices) == 1 and p.devices[0].layers == n and p.output_on_gpu \
            and not experts_on_cpu:
        return [lay.read]  # all on one device: the whole read, as a single card's
    per_layer = (lay.read - lay.output_read) / n
    out, layer = [], n
    for i, d in enumerate(reversed(p.devices)):
        first = layer - d.layers
        cpu_experts = max(0, min(experts_on_cpu, layer) - first)
        read = d.layers * per_layer - cpu_experts * lay.expert_read_per_layer
        if i == 0 and p.output_on_gpu:
            read += lay.output_read
        out.append(read)
        layer = first
    return out[::-1]


def _decode(t: ModelTerms, q: str, part: host.CpuPart, rig: Rig, cal: Calibration,
            ests: list[DecodeEstimate]) -> DecodeEstimate:
    """The time of a token as the sum of its stages: each device's share (`ests`, those of
    device_speeds), the CPU's part (`part`, _cpu_part), the split's cost."""
    gpu_s = gpu_fast = gpu_slow = 0.0
    confidence: Confidence = "low"
    gpu_bound: Bound = "bandwidth"
    if ests:  # one pass over the devices: sums in device order
        rank, slowest = 2, ests[0]
        for e in ests:
            gpu_s += 1.0 / e.tokens_per_s
            gpu_fast += 1.0 / e.high
            gpu_slow += 1.0 / e.low
            rank = min(rank, _CONFIDENCE_RANK[e.confidence])
            if e.tokens_per_s < slowest.tokens_per_s:
                slowest = e
        confidence = _CONFIDENCE_ORDER[rank]
        gpu_bound = slowest.bound  # the slowest device's (the first of equals)
    cpu_read = part.read
    rate_gb_s, ram_bound = _ram_rate(rig, q, t.is_moe) if cpu_read > 0 else (1.0, "ram_bandwidth")
    tps, low, high, k, host_s, alone = decode_figures(
        gpu_s, gpu_fast, gpu_slow, len(ests), cpu_read, rate_gb_s, ram_bound != "ram_bandwidth",
        part.paged_per_token(), rig.storage_gb_s)
    if alone:  # one device alone: its own estimate, as on one card
        return ests[0]
    bound = gpu_bound if k == 0 else HOST_BOUNDS[k] if k < 4 else ram_bound
    return DecodeEstimate(tps, low, high, "low" if host_s > 0 else confidence, bound)


def _cpu_part(lay: _Layout, p: Placement, kv_read: float, rig: Rig) -> host.CpuPart:
    """The bytes `p` leaves in system RAM, read per token and stored, and the RAM left to them
    (unbounded when the RAM is not known: nothing pages)."""
    ram = _usable_ram_bytes(rig)
    return host.CpuPart(*cpu_part_figures(
        lay.model.n_layers, lay.read, lay.output_read, lay.expert_read_per_layer,
        lay.model.expert_bytes, kv_read, p.cpu_layers, p.cpu_expert_layers, p.output_on_gpu,
        p.cpu_weights_bytes, p.cpu_kv_bytes, p.embedding_bytes,
        math.inf if ram is None else ram))


def _paging(part: host.CpuPart, p: Placement, rig: Rig) -> Paging:
    """What a paging estimate rests on, GiB and GB/s (the answer states it)."""
    return Paging(round((p.cpu_weights_bytes + p.cpu_kv_bytes) / GIB, 3),
                  round(rig.usable_ram_gib or 0.0, 3),
                  round(part.paged_per_token() / GIB, 3), rig.storage_gb_s)


# A rig's RAM bandwidth when neither it nor the CPU is given: dual-channel DDR4-3200
# (2 × 8 B × 3.2 GT/s), the figure `tpscalc here` assumes too.
DEFAULT_RAM_BANDWIDTH_GB_S = 51.2


def _ram_rate(rig: Rig, quant: str, is_moe: bool) -> tuple[float, Bound]:
    """The rate the CPU reads its weights at, GB/s, and the limit that sets it: with the CPU
    known, the least of RAM, CPU complex and cores (the RAM bandwidth, when not given, that of
    the memory the CPU takes); without, RAM_EFFICIENCY of the RAM bandwidth."""
    cpu = rig.cpu
    if cpu is None:
        return RAM_EFFICIENCY * (rig.ram_bandwidth_gb_s or DEFAULT_RAM_BANDWIDTH_GB_S), \
            "ram_bandwidth"
    bandwidth = rig.ram_bandwidth_gb_s or cpu.memory_bandwidth_gb_s
    return cpu_speed.decode_rate_gb_s(cpu, bandwidth, quant in UNQUANTIZED, is_moe)


def _prefill(t: ModelTerms, p: Placement, part: host.CpuPart, rig: Rig, query: Query,
             ests: list[PrefillEstimate | None]) -> PrefillEstimate | None:
    """The prompt's time: each device's share (`ests`, those of device_speeds) and, with
    layers in RAM, the copies of their weights over the link."""
    test = query.test
    prompt = test.n_prompt
    passes = math.ceil(prompt / test.n_ubatch)
    # a paging CPU part: each micro-batch reads every CPU weight, the evicted ones from storage
    paged = passes * part.paged_per_pass() / (rig.storage_gb_s * 1e9)
    if not rig.devices:
        rate = CPU_TFLOPS * 1e12 if rig.cpu is None else cpu_speed.prefill_flops(rig.cpu)
        compute = prompt * t.flops_per_token / rate
        seconds = compute + paged
        tps = prompt / seconds
        return PrefillEstimate(tps, tps * RIG_BAND[0], tps * RIG_BAND[1], seconds,
                               "storage" if paged > compute else "compute")
    known = [e for e in ests if e is not None]
    if len(known) < len(ests):
        return None
    compute = slow = fast = 0.0
    slowest = known[0] if known else None
    for e in known:  # in device order; the slowest is the first of equals
        compute += prompt / e.tokens_per_s
        slow += prompt / e.low
        fast += prompt / e.high
        if prompt / e.tokens_per_s > prompt / slowest.tokens_per_s:  # type: ignore[union-attr]
            slowest = e
    tps, low, high, seconds, k, pcie = prefill_figures(
        prompt, passes, compute, slow, fast, p.cpu_weights_bytes - p.embedding_bytes,
        PCIE_EFFICIENCY * (rig.pcie_gb_s or DEFAULT_PCIE_GB_S), paged)
    if len(known) == 1 and pcie <= 0:  # one device alone: its own estimate, as on one card
        return known[0]
    bound: Bound = "storage" if k == 2 else "pcie" if k == 1 else slowest.bound  # type: ignore[union-attr]
    return PrefillEstimate(tps, low, high, seconds, bound)
