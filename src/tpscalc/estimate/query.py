"""What the engine is asked: a `Query` (context, quality bounds, backend, KV type) and a `Rig`.

A `Query` checks its values once, when it is made, and spells them canonically; the engine takes
it as given. Every interface (site, JSON API, CLI, Python API) makes one through
`tpscalc.report.request`, which parses raw text into these fields.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING

from tpscalc.catalog.frozen import FrozenValue
from tpscalc.estimate import host
from tpscalc.estimate.bench import SpeedTestError, speed_test
from tpscalc.estimate.types import SpeedTest

if TYPE_CHECKING:
    from tpscalc.catalog.schema import Card, Cpu, Model

DEFAULT_CONTEXT = 4096
# Llama 4 Scout's 10M-token window is the longest any catalog model publishes; beyond it no
# model can hold the context, so it is rejected as input.
MAX_CONTEXT = 10_000_000
# The most compressed quantization a report offers unless the user lowers it: IQ4_XS, the
# reference pages' floor (below it perplexity rises steeply: +5 % at Q3_K_M, +30 % at IQ2_XXS
# on LLaMA 3 8B, catalog/data/quants.json).
DEFAULT_MIN_QUALITY = "IQ4_XS"
# llama.cpp GPU backends the speed model is calibrated for (sycl borrows vulkan's parameters).
BACKENDS = ("cuda", "rocm", "vulkan", "metal", "sycl")
# The runtimes an estimate may be for (estimate/runtimes.py implements each; llama.cpp is the
# default and the one the calibration measures).
RUNTIMES = ("llama.cpp", "ollama", "lmstudio", "llamafile", "mlx", "vllm", "sglang")
DEFAULT_RUNTIME = "llama.cpp"
RUNTIME_ALIASES = {"llamacpp": "llama.cpp", "llama-cpp": "llama.cpp", "lm-studio": "lmstudio",
                   "lm studio": "lmstudio", "mlx-lm": "mlx", "mlx_lm": "mlx"}
# KV-cache types llama.cpp offers for -ctk/-ctv that the product exposes (f16 is its default).
KV_TYPES = ("f16", "q8_0", "q4_0")


class EstimateInputError(ValueError):
    """Bad input to the engine; `code` names the field for the API's error shape."""

    def __init__(self, message: str, code: str = "bad_input",
                 suggestions: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.code = code
        self.suggestions = list(suggestions)


def check_context(context: int) -> int:
    """`context` if it is a whole number of tokens in 1..MAX_CONTEXT, else EstimateInputError."""
    if isinstance(context, bool) or not isinstance(context, int) or not 0 < context <= MAX_CONTEXT:
        raise EstimateInputError(
            f"context must be between 1 and {MAX_CONTEXT:,} tokens (a whole number), "
            f"not {context!r}", "bad_context")
    return context


def check_choice(value: str | None, choices: Sequence[str], what: str) -> str | None:
    """`value` lower-cased when it is one of `choices` (None when empty).

    Anything else raises EstimateInputError.
    """
    if value is None or not value.strip():
        return None
    found = value.strip().lower()
    if found not in choices:
        raise EstimateInputError(f"unknown {what} {value!r}; use one of {', '.join(choices)}",
                                 f"bad_{what.replace('-', '_').replace(' ', '_').lower()}")
    return found


def check_runtime(value: str | None) -> str:
    """The runtime's canonical name (RUNTIMES; an alias such as "lm-studio" too); None or
    empty: llama.cpp."""
    if value is None or not value.strip():
        return DEFAULT_RUNTIME
    name = RUNTIME_ALIASES.get(value.strip().lower(), value)
    return check_choice(name, RUNTIMES, "runtime") or DEFAULT_RUNTIME


# Unquantized types a quality ceiling may name above the ladder's top (Q8_0): `--max-quality F16`
# lets them in; the ladder itself stops at Q8_0 (+0.04 % perplexity at half the bytes).
ABOVE_LADDER = ("F16", "BF16")


def check_quality(name: str | None, code: str, *, ceiling: bool = False) -> str | None:
    """The canonical spelling of a quantization on the ladder (None when empty); a `ceiling` may
    also be one of ABOVE_LADDER."""
    if name is None or not name.strip():
        return None
    # The quantization table (and pydantic with it) loads on the first quality given, so a
    # command's --help stays light.
    from tpscalc.catalog.quants import UnknownQuantizationError, ladder_name, ladder_names

    try:
        return ladder_name(name, [*ABOVE_LADDER, *ladder_names()] if ceiling else None)
    except UnknownQuantizationError as exc:
        raise EstimateInputError(str(exc), code, exc.suggestions) from None


def ladder_position(name: str) -> int:
    """Where a quality bound sits: its ladder index, or -1 above the ladder (F16, BF16)."""
    from tpscalc.catalog.quants import ladder_names

    return -1 if name in ABOVE_LADDER else ladder_names().index(name)


def model_context_limit(model: Model) -> int | None:
    """The longest context `model` was built for, tokens (None when its source does not say)."""
    arch = model.architecture
    if arch is not None:
        return arch.max_context
    value = model.record_value("max_context")  # after Epoch's last record: the HF config's figure
    return value if isinstance(value, int) and value > 0 else None


def context_within_limit(model: Model, query: Query) -> int:
    """The query's context, or `model`'s own limit when that is shorter, tokens. A llama-bench
    test (a depth or prompt size given) keeps its context: llama-bench sizes its context to the
    test, past the trained length too."""
    limit = model_context_limit(model)
    benchmark = query.depth > 0 or query.n_prompt is not None or query.n_gen is not None
    if limit is None or benchmark or query.context <= limit:
        return query.context
    return limit


def query_for_model(model: Model, query: Query) -> Query:
    """`query` checked against `model`'s own context limit: the one check every interface uses.

    A context beyond the limit is refused with the limit named (EstimateInputError
    "context_beyond_model"); the default context is lowered to the limit instead, so a model
    built for 2,048 tokens still gets a page without a context being asked. A llama-bench test
    (a depth or prompt size given) is replayed as run: llama-bench sizes its context to the test,
    past the trained length too (ggml-org's Llama 2 7B rows go to depth 32,768).
    """
    limit = context_within_limit(model, query)
    if limit == query.context:
        return query
    if query.context == DEFAULT_CONTEXT:
        return replace(query, context=limit)
    raise EstimateInputError(
        f"{model.name} holds at most {limit:,} tokens of context; {query.context:,} is beyond "
        "its limit", "context_beyond_model")


@dataclass(frozen=True, eq=False, repr=False)  # eq, hash, repr: FrozenValue
class Query(FrozenValue):
    """What to estimate, checked once when made; hashable (it keys the report caches).

    context: tokens the conversation may hold. min_quality: the most compressed quantization
    allowed (the floor; DEFAULT_MIN_QUALITY unless lowered). max_quality: the least compressed
    one allowed (the ceiling). backend: the llama.cpp backend (None: each card's usual one).
    kv_type: the KV-cache type. text_only: leave out a vision-language model's image encoder
    (llama.cpp run without --mmproj).
    """

    context: int = DEFAULT_CONTEXT
    min_quality: str | None = DEFAULT_MIN_QUALITY
    max_quality: str | None = None
    backend: str | None = None
    kv_type: str = "f16"
    text_only: bool = False
    # The llama-bench conditions of the speeds (-p -n -d -fa -ub); None: a conversation that
    # fills the context (see `estimate/bench.py`).
    n_prompt: int | None = None
    n_gen: int | None = None
    depth: int = 0
    flash_attn: bool = True
    n_ubatch: int = 512
    runtime: str = DEFAULT_RUNTIME  # the runtime the answer is for (RUNTIMES)

    def __post_init__(self) -> None:
        check_context(self.context)
        object.__setattr__(self, "runtime", check_runtime(self.runtime))
        try:
            # checks the test parameters once, here, and keeps the test (asked per model)
            self.__dict__["_test"] = speed_test(self.context, self.n_prompt, self.n_gen,
                                                self.depth, self.flash_attn, self.n_ubatch)
        except SpeedTestError as exc:
            raise EstimateInputError(str(exc), f"bad_{str(exc).split()[0]}") from None
        floor = check_quality(self.min_quality, "bad_quality")
        ceiling = check_quality(self.max_quality, "bad_quality", ceiling=True)
        if (floor is not None and ceiling is not None
                and ladder_position(ceiling) > ladder_position(floor)):  # given end first
            floor, ceiling = ceiling, floor
        kv_type = check_choice(self.kv_type, KV_TYPES, "KV-cache type") or "f16"
        object.__setattr__(self, "min_quality", floor)
        object.__setattr__(self, "max_quality", ceiling)
        object.__setattr__(self, "backend", check_choice(self.backend, BACKENDS, "backend"))
        object.__setattr__(self, "kv_type", kv_type)
        # The hash the dataclass would compute, once: a query keys the engine's memo per model.
        self.__dict__["_hash"] = hash(tuple(getattr(self, f.name) for f in fields(self)))

    def __hash__(self) -> int:
        return int(self.__dict__["_hash"])

    @property
    def test(self) -> SpeedTest:
        """The llama-bench test the decode and prefill speeds are for."""
        test: SpeedTest = self.__dict__["_test"]
        return test

    def ladder_bounds(self) -> tuple[int | None, int | None]:
        """(ceiling, floor) as indexes on the quantization ladder (None: unbounded)."""
        if self.max_quality is None and self.min_quality is None:
            return None, None
        return (None if self.max_quality is None else ladder_position(self.max_quality),
                None if self.min_quality is None else ladder_position(self.min_quality))


@dataclass(frozen=True, eq=False, repr=False)  # eq, hash, repr: FrozenValue
class Rig(FrozenValue):
    """The hardware a model runs on: one or more devices, plus system RAM when known.

    ram_gib and ram_bandwidth_gb_s describe the host's memory (for offload); None when unknown.
    """

    devices: tuple[Card, ...]
    ram_gib: float | None = None
    ram_bandwidth_gb_s: float | None = None
    notes: tuple[str, ...] = field(default=())
    # A placement given by the user (llama.cpp -ngl, --n-cpu-moe, -ts); None: --fit chooses.
    n_gpu_layers: int | None = None
    n_cpu_moe: int | None = None
    tensor_split: tuple[float, ...] | None = None
    pcie_gb_s: float | None = None  # each card's PCIe link per direction; None: PCIe 4.0 x16
    # The host's CPU (its cores, fabric and memory: cpu_speed.py); None: unknown, the CPU's
    # share of a token then reads RAM at a stated efficiency (rig_engine.RAM_EFFICIENCY).
    cpu: Cpu | None = None
    # The host's OS (host.OSES; None: host.default_os), the RAM it keeps, GiB (None: the OS's
    # default), and the rate a CPU part too big for the rest pages from storage, GB/s.
    os: str | None = None
    ram_headroom_gib: float | None = None
    storage_read_gb_s: float | None = None

    def __post_init__(self) -> None:
        if self.os is not None and self.os not in host.OSES:
            raise EstimateInputError(f"unknown os {self.os!r}; use one of "
                                     f"{', '.join(host.OSES)}", "bad_os")
        if not self.devices and self.ram_gib is None:
            raise EstimateInputError("a rig needs at least one device, or system RAM (--ram) "
                                     "to run on the CPU", "bad_rig")
        for value, what in ((self.ram_gib, "ram"), (self.ram_bandwidth_gb_s, "ram_bandwidth"),
                            (self.pcie_gb_s, "pcie"), (self.storage_read_gb_s, "storage_read")):
            if value is not None and not (math.isfinite(value) and value > 0):
                raise EstimateInputError(f"{what} must be more than 0, not {value:g}",
                                         f"bad_{what}")
        headroom = self.ram_headroom_gib
        if headroom is not None and not (math.isfinite(headroom) and headroom >= 0):
            raise EstimateInputError(f"ram_headroom must be 0 or more, not {headroom:g}",
                                     "bad_ram_headroom")
        for count, what in ((self.n_gpu_layers, "n_gpu_layers"), (self.n_cpu_moe, "n_cpu_moe")):
            if count is not None and count < 0:
                raise EstimateInputError(f"{what} must be 0 or more, not {count}", f"bad_{what}")
        split = self.tensor_split
        if split is not None and (len(split) != len(self.devices) or sum(split) <= 0
                                  or any(not math.isfinite(x) or x < 0 for x in split)):
            raise EstimateInputError(
                f"tensor_split needs one share (0 or more) per GPU ({len(self.devices)})",
                "bad_tensor_split")
        self._settle_host()

    # The host's figures are read for every row a report places (several times a row): each is
    # worked out once per rig, in __post_init__ (functools.cached_property takes a lock on each
    # read under Python 3.11, which costs more than the figures), and kept beside its fields.
    def _settle_host(self) -> None:
        host_os = self.os or host.default_os(self.devices)
        headroom = host.ram_headroom_gib(host_os, self.ram_headroom_gib)
        self.__dict__.update(_host_os=host_os, _headroom_gib=headroom,
                             _usable_ram_gib=None if self.ram_gib is None
                             else host.usable_ram_gib(self.ram_gib, headroom))

    def with_devices(self, devices: tuple[Card, ...], cpu: Cpu | None,
                     ram_bandwidth_gb_s: float | None) -> Rig:
        """This rig with other devices (as many), CPU and RAM bandwidth, its other fields and
        their checks kept: __post_init__'s checks read none of the three but the device count
        (a report's ~850 rigs of one set of options are checked once, on the first)."""
        if len(devices) != len(self.devices) or not devices:
            raise ValueError("a rig's copy keeps its number of devices")
        rig = object.__new__(Rig)
        rig.__dict__.update(self.__dict__, devices=devices, cpu=cpu,
                            ram_bandwidth_gb_s=ram_bandwidth_gb_s)
        rig._settle_host()
        return rig

    @property
    def host_os(self) -> str:
        """The OS given, else the one assumed for these devices (host.default_os)."""
        host_os: str = self.__dict__["_host_os"]
        return host_os

    @property
    def headroom_gib(self) -> float:
        """RAM the OS and other processes keep, GiB (given, else the OS's default)."""
        headroom: float = self.__dict__["_headroom_gib"]
        return headroom

    @property
    def usable_ram_gib(self) -> float | None:
        """System RAM a model's CPU part may take, GiB; None when the RAM is not known."""
        usable: float | None = self.__dict__["_usable_ram_gib"]
        return usable

    @property
    def storage_gb_s(self) -> float:
        """The rate a paging CPU part is re-read at, GB/s (given, else the stated default)."""
        return self.storage_read_gb_s or host.DEFAULT_STORAGE_READ_GB_S

    @property
    def is_one_card(self) -> bool:
        """One GPU and no placement given, with or without system RAM: the card alone answers
        first, and the RAM is for what does not fit it."""
        return (len(self.devices) == 1 and self.n_gpu_layers is None and self.n_cpu_moe is None
                and self.tensor_split is None)

    @property
    def is_single_card(self) -> bool:
        """One GPU, no system RAM and no placement given: the engine's single-card path."""
        return self.is_one_card and self.ram_gib is None

    @classmethod
    def of(cls, card: Card) -> Rig:
        """A rig of one card and no offload."""
        return cls((card,))

    @property
    def name(self) -> str:
        """The devices as people write them ("RTX 3090 + RTX 3060 12 GB")."""
        if self.devices:
            return " + ".join(d.name for d in self.devices)
        return f"CPU only ({self.cpu.name})" if self.cpu is not None else "CPU only"

    @property
    def single_device(self) -> Card:
        """The one device of a single-device rig; the engine places no model across devices yet."""
        if len(self.devices) != 1:
            raise EstimateInputError(
                "several devices in one rig are not estimated yet; give one card", "bad_rig")
        return self.devices[0]
