"""Frozen result types of the estimation engine (what reports, CLI, API and web render)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from tpscalc.catalog.frozen import FrozenValue

if TYPE_CHECKING:
    from tpscalc.estimate.placement import Placement

Confidence = Literal["high", "medium", "low"]
# ram_bandwidth, cpu_fabric, cpu_compute: the CPU's share of a token, read from RAM at the RAM's
# bandwidth, at what the CPU complex can read, or at what its cores compute (cpu_speed.py);
# storage: a CPU part larger than the usable RAM re-read from the GGUF file (host.py)
Bound = Literal["bandwidth", "compute", "overhead", "ram_bandwidth", "pcie", "cpu_fabric",
                "cpu_compute", "storage"]
# paging: runs, but its CPU part exceeds the RAM left to it and pages from storage (host.py)
FitLabel = Literal["comfortable", "tight", "offload", "cpu", "paging", "no"]
Backend = Literal["cuda", "rocm", "vulkan", "metal", "sycl", "cpu"]
# File types whose weights are plain floats: no dequantization, no quantized kernels
UNQUANTIZED = frozenset({"F32", "F16", "BF16"})


@dataclass(frozen=True, eq=False, repr=False)
class MemoryBreakdown(FrozenValue):
    """Memory needed on the card, GiB."""

    weights_gib: float
    kv_cache_gib: float
    runtime_gib: float  # compute buffers + backend's fixed overhead
    total_gib: float
    approximated: bool  # True when weights come from parameters × average bits (no architecture)
    vision_gib: float = 0.0  # image encoder (mmproj weights + its compute buffer), in total_gib


@dataclass(frozen=True, eq=False, repr=False)
class DecodeEstimate(FrozenValue):
    """Generation speed for one request, tokens/s, with the range the calibration supports."""

    tokens_per_s: float
    low: float
    high: float
    confidence: Confidence
    bound: Bound  # which term dominated the time per token
    measured: float | None = None  # a real measurement for this card, model and quant, if held
    # the estimate with every weight type at its slowest kernel ÷ tokens_per_s (SYCL on Intel
    # GPUs, sycl_kernels.read_factors; 1 elsewhere): a band's low end sits on it
    slowest_ratio: float = 1.0


@dataclass(frozen=True, eq=False, repr=False)
class PrefillEstimate(FrozenValue):
    """Prompt-processing speed, tokens/s, and the time to the first token for the prompt, s."""

    tokens_per_s: float
    low: float
    high: float
    time_to_first_token_s: float
    bound: Bound


@dataclass(frozen=True, eq=False, repr=False)
class Measured(FrozenValue):
    """Real llama.cpp speeds of this exact card, model and quantization (SPEC §5), tokens/s."""

    decode_tokens_per_s: float | None
    prefill_tokens_per_s: float | None
    decode_test: str | None  # "tg128", ...
    prefill_test: str | None  # "pp512", ...
    source: str  # where the figures were published (the decode one's, else the prefill one's)


@dataclass(frozen=True, eq=False, repr=False)
class SpeedTest(FrozenValue):
    """What the speeds are for, as llama-bench's -p -n -d -fa -ub: decode is generating `n_gen`
    tokens after `depth` cached tokens, prefill is `n_prompt` tokens after `depth`."""

    n_prompt: int
    n_gen: int
    depth: int
    flash_attn: bool = True
    n_ubatch: int = 512


@dataclass(frozen=True, eq=False, repr=False)
class RunCommand(FrozenValue):
    """The shell command that realises an estimate in its runtime, and the settings
    (environment, Modelfile lines, a conversion) it relies on (estimate/commands.py)."""

    runtime: str
    command: str
    settings: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, eq=False, repr=False)
class Paging(FrozenValue):
    """A CPU part larger than the RAM left to it (fit "paging"): what stays resident, GiB, and
    what each token re-reads from the GGUF file, GiB, at the storage rate assumed, GB/s."""

    cpu_part_gib: float  # the weights and KV cache in system RAM
    resident_gib: float  # the RAM left to them (the RAM less the OS's headroom)
    read_per_token_gib: float  # re-read from storage per generated token
    storage_read_gb_s: float


@dataclass(frozen=True, eq=False, repr=False)
class Estimate(FrozenValue):
    """One model on one card at one quantization and context length."""

    model: str
    gpu: str
    quant: str | None  # None when nothing fits (or nothing above the quality floor)
    context: int
    backend: str
    memory: MemoryBreakdown
    usable_gib: float
    fits: bool
    fit: FitLabel
    decode: DecodeEstimate | None  # None when it does not fit
    prefill: PrefillEstimate | None
    short_by_gib: float | None = None  # how much memory is missing when it does not fit
    test: SpeedTest | None = None  # the conditions the decode and prefill speeds are for
    measured: Measured | None = None  # held measurements of this card, model and quant
    # Where the model sits on a rig (several GPUs, RAM offload, CPU only); None: one card
    placement: Placement | None = None
    offload_share: float | None = None  # share of the weights in system RAM (rigs only)
    runtime: str = "llama.cpp"  # the runtime the answer is for (estimate/runtimes.py)
    tensor_parallel: int = 1  # GPUs each layer is split across (vLLM, SGLang); 1: none
    refusal: str | None = None  # why the runtime cannot run on this rig (nothing estimated)
    run: RunCommand | None = None  # the command that realises it (a single answer's)
    paging: Paging | None = None  # fit "paging": what pages from storage
