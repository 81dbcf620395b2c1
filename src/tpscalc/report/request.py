"""One request, defined once: what to estimate (`Query`), how to show it (`Filters`), in which
language, and the one parser every interface uses.

`PARAMS` is the single description of each request field: its name in a query string and on
the command line (`--min-quality`), its type, its help text and its rule. The site and the JSON
API parse query strings with `parse_request`; the CLI builds its options from `PARAMS` and
parses their text with the same function; the Python API passes its keyword arguments through it
too. The OpenAPI parameters (`openapi_parameters`) come from the same table. Values are checked
here once; the report builders and the engine take the result as given.
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from tpscalc.catalog.frozen import FrozenValue
from tpscalc.estimate.batched import MAX_PARALLEL
from tpscalc.estimate.host import DEFAULT_STORAGE_READ_GB_S, OSES, RAM_HEADROOM_GIB
from tpscalc.estimate.query import (
    ABOVE_LADDER,
    BACKENDS,
    DEFAULT_CONTEXT,
    DEFAULT_MIN_QUALITY,
    KV_TYPES,
    MAX_CONTEXT,
    RUNTIMES,
    EstimateInputError,
    Query,
    check_choice,
    check_quality,
    check_runtime,
)
from tpscalc.i18n import DEFAULT_LANGUAGE, LANGUAGES, UnknownLanguageError, check_language

if TYPE_CHECKING:  # the catalog's CPU table loads only when a CPU is named
    from tpscalc.catalog.schema import Cpu

SORTS = ("speed", "size", "date")
PREFERENCES = ("quality", "speed", "balanced")  # how a card's quantization is chosen (choice.py)
MAX_TOKENS_PER_S = 100_000  # no llama.cpp decode is faster; larger is a typo
MAX_MEMORY_GIB = 100_000  # no device has more; larger bounds are typos
MAX_SEARCH_CHARS = 200
MAX_GPUS = 16  # more cards than one llama.cpp host takes are a typo
ROWS_PER_PAGE = 50  # table rows on one site page
MAX_PAGE = 1000
NO_CONTROL_CHARACTERS = "^[^\\x00-\\x1f\\x7f]*$"  # the text rule, as an OpenAPI pattern
DEFAULT_RAM_CHANNELS = 2  # a desktop's dual channel
MAX_RAM_CHANNELS = 24  # two 12-channel server sockets
# PCIe bandwidth per lane and direction, GB/s, after line coding (PCI-SIG: 2.5, 5 GT/s with
# 8b/10b; 8, 16, 32 GT/s with 128b/130b; 64 GT/s PAM4 with FLIT, ~242/256)
PCIE_LANE_GB_S = {1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}
PCIE_LANES = (1, 2, 4, 8, 16)
# What --ram-type and --pcie accept, as OpenAPI patterns too (ECMA and Python read them alike):
# "DDR5-6000", "ddr4 3200", "LPDDR5X-8533 MT/s"; "4x16", "gen3 x8", "PCIe 5.0 x16".
RAM_TYPE_TEXT = ("(?:[Ll][Pp])?[Dd][Dd][Rr][345][Xx]? *[- ]? *([1-9][0-9]{2,4}) *"
                 "(?:[Mm][Tt]/?[Ss])?")
PCIE_TEXT = "(?:[Gg][Ee][Nn] *|[Pp][Cc][Ii][Ee] *)?([1-6])(?:[.]0)? *[xX×] *(16|1|2|4|8)"
RAM_TYPE_PATTERN = f"^ *{RAM_TYPE_TEXT} *$|^ *$"
PCIE_PATTERN = f"^ *{PCIE_TEXT} *$|^ *$"
# compiled on first use (re's own cache): most requests give neither (~0.3 ms at every start)
_RAM_TYPE = f"^ *({RAM_TYPE_TEXT}) *$"
_PCIE = f"^ *{PCIE_TEXT} *$"
_TRUE = frozenset({"1", "true", "on", "yes"})
_FALSE = frozenset({"", "0", "false", "off", "no"})

RequestError = EstimateInputError  # bad request input: a message and a `code` for the API


@dataclass(frozen=True, eq=False, repr=False)  # eq, hash, repr: FrozenValue
class Filters(FrozenValue):
    """Which rows a report shows, in which order, and which of the quantizations that fit a row
    shows (prefer, min_tps); nothing here changes an estimate itself."""

    search: str | None = None
    min_memory_gib: float | None = None
    max_memory_gib: float | None = None
    show_all: bool = False
    sort: str = "size"  # card report: largest model first, what a card owner asks first
    page: int = 1  # the page of the table a site page shows (the JSON API gives every row)
    # Which of the quantizations that fit a row shows (tpscalc.report.choice): None keeps the
    # seed's rule, the least compressed that fits; min_tps: the best quality reaching it.
    prefer: str | None = None
    min_tps: float | None = None


@dataclass(frozen=True, eq=False, repr=False)  # eq, hash, repr: FrozenValue
class RigOptions(FrozenValue):
    """The rig around the card(s) named: how many, system RAM, and a placement to honour."""

    gpus: int | None = None  # copies of the named card (the reports' "cards: 1/2/4/8")
    ram_gib: float | None = None
    ram_bandwidth_gb_s: float | None = None
    n_gpu_layers: int | None = None
    n_cpu_moe: int | None = None
    tensor_split: tuple[float, ...] | None = None
    ram_type: str | None = None  # "DDR5-6000": the RAM bandwidth from type, speed, channels
    ram_channels: int | None = None  # memory channels populated (default 2 with ram_type)
    pcie: str | None = None  # each card's PCIe link, "4x16" (generation × lanes)
    cpu: str | None = None  # the host's CPU as the user names it ("7950X"), resolved by rigs.py
    os: str | None = None  # the host's OS (estimate/host.py OSES); None: assumed per device
    ram_headroom_gib: float | None = None  # RAM the OS keeps (None: the OS's default)
    gpu_memory_gib: float | None = None  # GiB each GPU may use (None: the card's, the OS's share)
    storage_read_gb_s: float | None = None  # a paging CPU part's re-read rate (None: default)

    @cached_property  # asked once per card of a model report
    def is_default(self) -> bool:
        """Nothing given: one card, no system RAM (the single-card estimate)."""
        return self == RigOptions()

    @property
    def bandwidth_gb_s(self) -> float | None:
        """The RAM bandwidth given, or derived from ram_type and ram_channels; None if neither."""
        if self.ram_bandwidth_gb_s is not None or self.ram_type is None:
            return self.ram_bandwidth_gb_s
        return ram_bandwidth_gb_s(self.ram_type, self.ram_channels or DEFAULT_RAM_CHANNELS)

    @property
    def pcie_gb_s(self) -> float | None:
        """The PCIe link's bandwidth per direction, GB/s (None: the default link)."""
        return None if self.pcie is None else pcie_gb_s(self.pcie)


@dataclass(frozen=True, eq=False, repr=False)  # eq, hash, repr: FrozenValue
class ServingOptions(FrozenValue):
    """Many users at once (estimate/serving.py): sequences decoded together, the per-user speed
    to find the most users for, and speculative decoding (estimate/speculative.py)."""

    parallel: int | None = None  # llama-server -np N (None: one request)
    users_at: float | None = None  # tok/s each user should get: the most users that do
    draft: str | None = None  # a draft model's name (llama-server -md)
    mtp: bool = False  # the model's own multi-token-prediction layers as the draft

    @property
    def is_default(self) -> bool:
        """Nothing asked: the single-request estimate."""
        return self == ServingOptions()


@dataclass(frozen=True, eq=False, repr=False)  # eq, hash, repr: FrozenValue
class ReportRequest(FrozenValue):
    """A whole report request: the query, the view filters and the language; hashable."""

    query: Query = field(default_factory=Query)
    filters: Filters = field(default_factory=Filters)
    lang: str = DEFAULT_LANGUAGE
    rig: RigOptions = field(default_factory=RigOptions)
    serving: ServingOptions = field(default_factory=ServingOptions)


Kind = Literal["tokens", "count", "gib", "text", "flag", "flag_on", "quality", "choice", "page",
               "rate", "split", "ram_type", "pcie", "cpu", "tps", "runtime"]


@dataclass(frozen=True, eq=False, repr=False)  # eq, hash, repr: FrozenValue
class Param(FrozenValue):
    """One request field as every interface spells it."""

    name: str  # query-string key; the CLI option is --name with "_" as "-"
    attr: str  # the attribute on Query, Filters or ReportRequest
    target: Literal["query", "filters", "request", "rig", "serving"]
    kind: Kind
    help: str
    choices: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()  # other keys accepted (the Python API's attribute names)
    unit: str = ""  # the CLI's metavar where the kind's default would mislead (a count of GPUs)

    @property
    def option(self) -> str:
        """The command-line option, e.g. --min-quality."""
        return "--" + self.name.replace("_", "-")


PARAMS: tuple[Param, ...] = (
    Param("context", "context", "query", "tokens",
          f"Context length, tokens (1 to {MAX_CONTEXT:,}; default {DEFAULT_CONTEXT:,})."),
    Param("min_quality", "min_quality", "query", "quality",
          f"Most compressed quantization allowed, e.g. Q4_K_M (default {DEFAULT_MIN_QUALITY}; "
          "IQ2_XXS allows every one)."),
    Param("max_quality", "max_quality", "query", "quality",
          "Least compressed quantization allowed, e.g. Q6_K (default: Q8_0, the ladder's top; "
          "F16 or BF16 lets the unquantized weights in)."),
    Param("backend", "backend", "query", "choice",
          "llama.cpp backend (default: each card's usual one).", BACKENDS),
    Param("runtime", "runtime", "query", "runtime",
          "Runtime the answer is for: llama.cpp (default), ollama, lmstudio, llamafile, mlx "
          "(Apple), vllm or sglang (NVIDIA, AMD).", RUNTIMES),
    Param("kv_type", "kv_type", "query", "choice",
          "KV-cache type (llama.cpp -ctk/-ctv; default f16).", KV_TYPES),
    Param("text_only", "text_only", "query", "flag",
          "Leave out a vision-language model's image encoder (llama.cpp without --mmproj)."),
    Param("depth", "depth", "query", "count",
          "Tokens already in the cache when the speeds are measured (llama-bench -d; default 0)."),
    Param("n_prompt", "n_prompt", "query", "count",
          "Prompt tokens for the prefill speed (llama-bench -p; default the context)."),
    Param("n_gen", "n_gen", "query", "count",
          "Generated tokens for the decode speed (llama-bench -n; default the context)."),
    Param("flash_attn", "flash_attn", "query", "flag_on",
          "Flash attention on (default) or off (llama-bench -fa)."),
    Param("n_ubatch", "n_ubatch", "query", "count",
          "Micro-batch of the prompt, tokens (llama-bench -ub; default 512)."),
    Param("search", "search", "filters", "text", "Only rows whose name contains this text."),
    Param("min_memory", "min_memory_gib", "filters", "gib",
          "Only cards with at least this much memory, GiB.", aliases=("min_memory_gib",)),
    Param("max_memory", "max_memory_gib", "filters", "gib",
          "Only cards with at most this much memory, GiB.", aliases=("max_memory_gib",)),
    Param("all", "show_all", "filters", "flag", "Also show rows that do not fit.",
          aliases=("show_all",)),
    Param("sort", "sort", "filters", "choice",
          "Order of the card report's rows: size (default), speed or date.", SORTS),
    Param("prefer", "prefer", "filters", "choice",
          "Which quantization each card gets among those that fit: quality (lowest KL "
          "divergence), speed (fastest decode) or balanced (the fastest that is near-lossless, "
          "KLD under 0.05). Default: the least compressed that fits.", PREFERENCES),
    Param("min_tps", "min_tps", "filters", "tps",
          "Decode speed to reach, tokens/s: each card gets the highest-quality quantization "
          "that still reaches it (the fastest when none does)."),
    Param("page", "page", "filters", "page",
          f"Page of the site's table ({ROWS_PER_PAGE} rows a page; the JSON API gives all rows)."),
    Param("lang", "lang", "request", "choice", "Language of the report: en, es or nl.",
          LANGUAGES),
    Param("gpus", "gpus", "rig", "count", "Number of identical cards (default 1).", unit="N"),
    Param("ram", "ram_gib", "rig", "gib",
          "System RAM for offload, GiB (default: none; with --gpu none, CPU only).",
          aliases=("ram_gib",)),
    Param("ram_bandwidth", "ram_bandwidth_gb_s", "rig", "rate",
          "System RAM bandwidth, GB/s (default 51.2, dual-channel DDR4-3200).",
          aliases=("ram_bandwidth_gb_s",)),
    Param("ram_type", "ram_type", "rig", "ram_type",
          "System RAM type and speed, e.g. DDR5-6000 (DDR4, DDR5, LPDDR5, LPDDR5X): the RAM "
          "bandwidth is MT/s × 8 bytes × channels (--ram-bandwidth, when given, wins)."),
    Param("ram_channels", "ram_channels", "rig", "count",
          f"Memory channels populated, with --ram-type (default {DEFAULT_RAM_CHANNELS}).",
          unit="N"),
    Param("cpu", "cpu", "rig", "cpu",
          "The host's CPU, e.g. \"Ryzen 9 7950X\" (its cores, fabric and memory bound the CPU's "
          "share of a token; without --ram-bandwidth, the RAM bandwidth of the memory it "
          "takes). Default: unknown, RAM read at 65 % of its bandwidth."),
    Param("os", "os", "rig", "choice",
          "The host's operating system: linux, windows or macos (default: macos with an Apple "
          "chip, else linux); sets the RAM it keeps and a unified-memory GPU's share.", OSES),
    Param("ram_headroom", "ram_headroom_gib", "rig", "gib",
          "RAM the OS and other programs keep, GiB (default by OS: "
          + ", ".join(f"{k} {v:g}" for k, v in RAM_HEADROOM_GIB.items())
          + "); the model's CPU part gets the rest, and pages from storage beyond it.",
          aliases=("ram_headroom_gib",)),
    Param("gpu_memory", "gpu_memory_gib", "rig", "gib",
          "GiB each GPU may use (default: a card's memory; a unified-memory chip's share as its "
          "OS allows: macOS's wired limit, Strix Halo 3/4 on Windows, all but the headroom on "
          "Linux).", aliases=("gpu_memory_gib",)),
    Param("storage_read", "storage_read_gb_s", "rig", "rate",
          f"Storage read rate, GB/s, for a CPU part larger than the RAM left to it (default "
          f"{DEFAULT_STORAGE_READ_GB_S:g}, an NVMe read through page faults).",
          aliases=("storage_read_gb_s",)),
    Param("pcie", "pcie", "rig", "pcie",
          "Each card's PCIe link as generation x lanes, e.g. 4x16 (default 4x16); bounds the "
          "prompt speed of a partial offload."),
    Param("n_gpu_layers", "n_gpu_layers", "rig", "count",
          "Layers on the GPUs, as llama.cpp's -ngl (default: as many as fit; more than the "
          "model has, e.g. 99 or 999, means all of them, as in llama.cpp).", unit="LAYERS"),
    Param("n_cpu_moe", "n_cpu_moe", "rig", "count",
          "Layers whose MoE experts stay in RAM, as llama.cpp's --n-cpu-moe.", unit="LAYERS"),
    Param("tensor_split", "tensor_split", "rig", "split",
          "Share of the layers per GPU, as llama.cpp's -ts, e.g. 3,1."),
    Param("parallel", "parallel", "serving", "count",
          f"Users served at once, each with the whole context (llama-server -np N; 1 to "
          f"{MAX_PARALLEL}): memory for N sequences, aggregate and per-user tok/s, first token "
          "under load.", unit="USERS"),
    Param("users_at", "users_at", "serving", "tps",
          "Per-user speed, tok/s (e.g. 20): the most users the card serves at it, each with the "
          "whole context."),
    Param("draft", "draft", "serving", "text",
          "Draft model for speculative decoding (llama-server -md), of the same tokenizer family."),
    Param("mtp", "mtp", "serving", "flag",
          "Speculative decoding with the model's own multi-token-prediction layers "
          "(Qwen3.5/3.6, DeepSeek-V3, GLM-4.5, MiMo)."),
)
PARAM = {p.name: p for p in PARAMS}
CHOICE_PARAMS = ("prefer", "min_tps")  # which fitting quantization a row gets (choice.py)
MODEL_REPORT_PARAMS = ("context", "min_quality", "max_quality", "backend", "kv_type",
                       "text_only", "search", "min_memory", "max_memory", "all", "lang",
                       *CHOICE_PARAMS, "runtime")
CARD_REPORT_PARAMS = ("context", "min_quality", "max_quality", "backend", "kv_type", "text_only",
                      "search", "all", "sort", "lang", *CHOICE_PARAMS, "runtime",
                      "users_at")
SPEED_TEST_PARAMS = ("depth", "n_prompt", "n_gen", "flash_attn", "n_ubatch")
HOST_PARAMS = ("os", "ram_headroom", "gpu_memory", "storage_read")  # what the OS leaves
RIG_PARAMS = ("gpus", "ram", "ram_bandwidth", "ram_type", "ram_channels", "cpu", "pcie",
              "n_gpu_layers", "n_cpu_moe", "tensor_split", *HOST_PARAMS)
# the CLI's model and card commands
REPORT_RIG_PARAMS = ("gpus", "ram", "ram_bandwidth", "ram_type", "ram_channels", "cpu", "pcie",
                     *HOST_PARAMS)
# The model and card reports with a rig around the card: the CLI's commands and the JSON API.
MODEL_RIG_REPORT_PARAMS = MODEL_REPORT_PARAMS + REPORT_RIG_PARAMS
CARD_RIG_REPORT_PARAMS = CARD_REPORT_PARAMS + REPORT_RIG_PARAMS
SITE_RIG_PARAMS = ("gpus", "ram")  # the site's "cards" and "system RAM" controls
SITE_GPU_COUNTS = (1, 2, 4, 8)  # what the "cards" control offers
SITE_RAM_GIB = (32, 64, 128, 256)  # what the "system RAM" control offers (and "none")
SERVING_PARAMS = ("parallel", "users_at", "draft", "mtp")
ESTIMATE_PARAMS = ("context", "min_quality", "max_quality", "backend", "kv_type", "text_only",
                   *SPEED_TEST_PARAMS, *RIG_PARAMS, *CHOICE_PARAMS, "runtime",
                   *SERVING_PARAMS)
ESTIMATE_CLI_PARAMS = (*ESTIMATE_PARAMS, "lang")  # the CLI prints its table in a language
PAGE_PARAMS = ("page",)  # the site's pages take these too
# The fields whose empty text means "not given": the free-text ones (the JSON API takes them
# empty too) and those the site's form sends as "" for its "any", "none" and "the vendor's
# usual" choices or an empty number box. Any other field given as "" (`context=`,
# `--context ""`, context="") is refused, as the JSON API refuses it.
BLANK_MEANS_DEFAULT = frozenset({"search", "tensor_split", "max_quality", "backend", "ram",
                                 "min_memory", "max_memory"})


def _is_blank(raw: object) -> bool:
    return raw is None or (isinstance(raw, str) and raw.strip() == "")


def _check_text(raw: str, name: str) -> str:
    """`raw` unless it holds a control character (a NUL byte, an escape)."""
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in raw):
        raise RequestError(f"{name} must not contain control characters", f"bad_{name}")
    return raw


def parse_tokens(raw: object, name: str = "context") -> int:
    """A whole number of tokens from text ("8192", "8_192", "8,192", any script's digits)."""
    if isinstance(raw, bool | float):
        raise RequestError(f"{name} must be a whole number of tokens, not {raw!r}", f"bad_{name}")
    if isinstance(raw, int):
        return raw
    text = _check_text(str(raw), name).strip().replace("_", "").replace(",", "")
    try:
        return int(text)
    except ValueError:
        raise RequestError(f"{name} must be a whole number of tokens, not {raw!r}",
                           f"bad_{name}") from None


def parse_page(raw: object) -> int:
    """A page number, 1..MAX_PAGE (a page past the last shows the last)."""
    value = parse_tokens(raw, "page")
    if not 1 <= value <= MAX_PAGE:
        raise RequestError(f"page must be between 1 and {MAX_PAGE}, not {value}", "bad_page")
    return value


def parse_gib(raw: object, name: str) -> float:
    """A finite memory amount in GiB between 0 and MAX_MEMORY_GIB."""
    if isinstance(raw, bool):
        raise RequestError(f"{name} must be a number of GiB, not {raw!r}", "bad_memory")
    try:
        value = float(raw if isinstance(raw, int | float) else _check_text(str(raw), name))
    except ValueError:
        raise RequestError(f"{name} must be a number of GiB, not {raw!r}", "bad_memory") from None
    if not (math.isfinite(value) and 0 <= value <= MAX_MEMORY_GIB):
        raise RequestError(f"{name} must be between 0 and {MAX_MEMORY_GIB} GiB", "bad_memory")
    return value


def parse_rate(raw: object, name: str) -> float:
    """A bandwidth in GB/s: a finite number above 0."""
    try:
        value = float(raw if isinstance(raw, int | float) and not isinstance(raw, bool)
                      else _check_text(str(raw), name))
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 < value <= 100_000):
        raise RequestError(f"{name} must be a bandwidth in GB/s above 0, not {raw!r}",
                           f"bad_{name}")
    return value


def parse_tps(raw: object, name: str) -> float:
    """A decode speed in tokens/s: a finite number above 0."""
    try:
        value = float(raw if isinstance(raw, int | float) and not isinstance(raw, bool)
                      else _check_text(str(raw), name))
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 < value <= MAX_TOKENS_PER_S):
        raise RequestError(f"{name} must be a speed in tokens/s above 0, not {raw!r}",
                           f"bad_{name}")
    return value


def parse_split(raw: object) -> tuple[float, ...]:
    """llama.cpp's -ts: shares per GPU, "3,1" or "24/12" (0 or more each, not all 0)."""
    text = raw if isinstance(raw, str) else ",".join(str(x) for x in raw) \
        if isinstance(raw, list | tuple) else str(raw)
    try:
        shares = tuple(float(x) for x in _check_text(text, "tensor_split")
                       .replace("/", ",").split(","))
    except ValueError:
        shares = ()
    if not shares or any(not math.isfinite(x) or x < 0 for x in shares) or sum(shares) <= 0:
        raise RequestError(f"tensor_split must be shares per GPU like 3,1, not {raw!r}",
                           "bad_tensor_split")
    return shares


def parse_ram_type(raw: object) -> str:
    """RAM type and transfer rate, "DDR5-6000" (also "ddr5 6000", "LPDDR5X-8533"), canonical."""
    found = re.match(_RAM_TYPE, _check_text(str(raw), "ram_type"))
    if found is None:
        raise RequestError(f"ram_type must be a type and speed like DDR5-6000 (DDR4, DDR5, "
                           f"LPDDR5, LPDDR5X), not {raw!r}", "bad_ram_type")
    kind = re.match("[A-Za-z]+[0-9][Xx]?", found.group(1))
    assert kind is not None  # the pattern starts so
    return f"{kind.group(0).upper()}-{int(found.group(2))}"


def ram_bandwidth_gb_s(ram_type: str, channels: int) -> float:
    """Peak RAM bandwidth, GB/s: transfers per second × 8 bytes (a 64-bit channel) × channels;
    DDR5-6000 in two channels: 96 GB/s."""
    rate = int(parse_ram_type(ram_type).rsplit("-", 1)[1])
    return rate * 8 * channels / 1000


def parse_pcie(raw: object) -> str:
    """A PCIe link as generation × lanes, "4x16" (also "gen4 x16", "PCIe 5.0 x8"), canonical."""
    found = re.match(_PCIE, _check_text(str(raw), "pcie"))
    if found is None:
        raise RequestError(f"pcie must be generation x lanes like 4x16 (generation 1-6, lanes "
                           f"{', '.join(map(str, PCIE_LANES))}), not {raw!r}", "bad_pcie")
    return f"{found.group(1)}x{found.group(2)}"


def pcie_gb_s(link: str) -> float:
    """Bandwidth of a PCIe link per direction, GB/s (4x16: 31.5)."""
    gen, lanes = (int(x) for x in parse_pcie(link).split("x"))
    return PCIE_LANE_GB_S[gen] * lanes


def find_cpu(name: str) -> Cpu:
    """The CPU of the CPU table `name` designates ("7950X"); an unknown or ambiguous name is a
    RequestError (unknown_cpu) listing the closest."""
    from tpscalc.catalog import NameNotFoundError, get_cpu

    try:
        return get_cpu(name)
    except NameNotFoundError as exc:
        raise RequestError(str(exc), "unknown_cpu", exc.suggestions) from None


def parse_cpu(raw: object) -> str:
    """A CPU as the user names it ("7950X"), as the CPU table names it (find_cpu)."""
    return find_cpu(_check_text(str(raw), "cpu").strip()).name


def parse_flag(raw: object, name: str) -> bool:
    """True for 1/true/on/yes, False for 0/false/off/no or empty."""
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise RequestError(f"{name} must be 1 or 0 (true or false), not {raw!r}", f"bad_{name}")


def _value(param: Param, raw: object) -> Any:
    """The typed value of one field from its raw form (text or an already typed value)."""
    if isinstance(raw, str) and raw == "" and param.name not in BLANK_MEANS_DEFAULT:
        raise RequestError(f"parameter {param.name!r} is empty", f"bad_{param.name}")
    if param.kind == "tokens":
        return DEFAULT_CONTEXT if _is_blank(raw) else parse_tokens(raw, param.name)
    if param.kind == "gib":
        return None if _is_blank(raw) else parse_gib(raw, param.name)
    if param.kind == "flag":
        return False if _is_blank(raw) else parse_flag(raw, param.name)
    if param.kind == "flag_on":  # blank: the default (on)
        return None if _is_blank(raw) else parse_flag(raw, param.name)
    if param.kind == "count":  # blank: the default the Query states
        return None if _is_blank(raw) else parse_tokens(raw, param.name)
    if param.kind == "page":
        return 1 if _is_blank(raw) else parse_page(raw)
    if param.kind == "rate":
        return None if _is_blank(raw) else parse_rate(raw, param.name)
    if param.kind == "tps":
        return None if _is_blank(raw) else parse_tps(raw, param.name)
    if param.kind == "split":
        return None if _is_blank(raw) else parse_split(raw)
    if param.kind == "ram_type":
        return None if _is_blank(raw) else parse_ram_type(raw)
    if param.kind == "pcie":
        return None if _is_blank(raw) else parse_pcie(raw)
    if param.kind == "cpu":
        return None if _is_blank(raw) else parse_cpu(raw)
    if param.kind == "runtime":
        return None if _is_blank(raw) else check_runtime(_check_text(str(raw), param.name))
    if _is_blank(raw):
        return None
    text = _check_text(str(raw), param.name)
    if param.kind == "text":
        return text.strip()[:MAX_SEARCH_CHARS] or None
    if param.kind == "quality":
        return check_quality(text, "bad_quality", ceiling=param.name == "max_quality")
    if param.name == "lang":
        try:
            return check_language(text)
        except UnknownLanguageError as exc:
            raise RequestError(str(exc), "unknown_language") from None
    return check_choice(text, param.choices, param.name)


def parse_request(raw: Mapping[str, object], allowed: tuple[str, ...] | None = None,
                  *, strict: bool = False) -> ReportRequest:
    """The request that `raw` (query-string text or typed keyword values) describes.

    allowed: the field names this interface takes (default: all). strict: reject keys that
    are no field (the Python API); a query string may carry others (partial=1, utm_*).
    Raises RequestError (an EstimateInputError with `code`) on the first bad value.
    """
    names = allowed if allowed is not None else tuple(PARAM)
    by_key = {key: PARAM[n] for n in names for key in (n, *PARAM[n].aliases)}
    if strict:
        unknown = sorted(k for k in raw if k not in by_key)
        if unknown:
            raise RequestError(f"unknown option {unknown[0]!r}; use one of {', '.join(names)}")
    values: dict[str, dict[str, Any]] = {"query": {}, "filters": {}, "request": {}, "rig": {},
                                         "serving": {}}
    for key, param in by_key.items():
        if key in raw and param.attr not in values[param.target]:
            values[param.target][param.attr] = _value(param, raw[key])
    given = values["filters"]
    lo, hi = given.get("min_memory_gib"), given.get("max_memory_gib")
    if hi is not None and hi == 0:
        raise RequestError("max_memory must be more than 0 GiB", "bad_memory")
    if lo is not None and hi is not None and lo > hi:  # the same range, given end first
        given["min_memory_gib"], given["max_memory_gib"] = hi, lo
    filters = Filters(**{k: v for k, v in given.items() if v is not None})
    query_values = {k: v for k, v in values["query"].items() if v is not None}
    rig_values = {k: v for k, v in values["rig"].items() if v is not None}
    if rig_values.get("ram_gib") == 0:
        raise RequestError("ram must be more than 0 GiB", "bad_ram")
    if rig_values.get("gpu_memory_gib") == 0:
        raise RequestError("gpu_memory must be more than 0 GiB", "bad_gpu_memory")
    if not 1 <= rig_values.get("gpus", 1) <= MAX_GPUS:
        raise RequestError(f"gpus must be 1 to {MAX_GPUS}", "bad_gpus")
    if not 1 <= rig_values.get("ram_channels", 1) <= MAX_RAM_CHANNELS:
        raise RequestError(f"ram_channels must be 1 to {MAX_RAM_CHANNELS}", "bad_ram_channels")
    if rig_values.get("gpus") == 1:  # one card is the default: the same request, one cache key
        del rig_values["gpus"]
    serving = {k: v for k, v in values["serving"].items() if v is not None and v is not False}
    if not 1 <= serving.get("parallel", 1) <= MAX_PARALLEL:
        raise RequestError(f"parallel must be 1 to {MAX_PARALLEL}", "bad_parallel")
    return ReportRequest(Query(**query_values), filters,
                         values["request"].get("lang") or DEFAULT_LANGUAGE,
                         RigOptions(**rig_values), ServingOptions(**serving))


def parse_quant(raw: object) -> str | None:
    """A single quantization for one estimate (`--quant`, `quant=`): one on the ladder, or any
    other GGUF type the catalog knows (Q4_0, F16, MXFP4: llama-bench rows use them)."""
    if _is_blank(raw):
        return None
    text = _check_text(str(raw), "quant")
    from tpscalc.estimate.runtimes import OWN_FORMATS

    own = next((f for f in OWN_FORMATS if f.lower() == text.strip().lower()), None)
    if own is not None and own not in ("BF16",):  # MLX-4bit, FP8, INT4: the runtime checks it
        return own
    try:
        return check_quality(text, "bad_quant")
    except RequestError as on_ladder:
        from tpscalc.catalog.quants import UnknownQuantizationError, get_quant

        try:
            return get_quant(text).name
        except UnknownQuantizationError:
            raise on_ladder from None


def to_query(request: ReportRequest, **changes: object) -> dict[str, str]:
    """The fields that differ from their defaults as query-string text (the language is in the
    path); `changes` overrides fields by their query-string name, e.g. page=2."""
    out: dict[str, str] = {}
    default = ReportRequest()
    for param in PARAMS:
        if param.target == "request":
            continue
        owner, base = {"query": (request.query, default.query),
                       "rig": (request.rig, default.rig),
                       "serving": (request.serving, default.serving)}.get(
            param.target, (request.filters, default.filters))
        value = changes.get(param.name, getattr(owner, param.attr))
        if value is None or value == getattr(base, param.attr):
            continue
        if isinstance(value, tuple):
            value = ",".join(f"{x:g}" for x in value)
        out[param.name] = ("1" if value is True else f"{value:g}" if isinstance(value, float)
                           else str(value))
    return out


def openapi_parameters(names: tuple[str, ...]) -> list[dict[str, Any]]:
    """OpenAPI 3 query parameters for `names`, typed and described from `PARAMS`."""
    out = []
    for name in names:
        p = PARAM[name]
        schema: dict[str, Any]
        if p.kind == "tokens":
            schema = {"type": "integer", "minimum": 1, "maximum": MAX_CONTEXT,
                      "default": DEFAULT_CONTEXT}
        elif p.name == "gpus":
            schema = {"type": "integer", "minimum": 1, "maximum": MAX_GPUS}
        elif p.name == "ram_channels":
            schema = {"type": "integer", "minimum": 1, "maximum": MAX_RAM_CHANNELS}
        elif p.name == "parallel":
            schema = {"type": "integer", "minimum": 1, "maximum": MAX_PARALLEL}
        elif p.kind == "count":
            schema = {"type": "integer", "minimum": 1 if p.name == "n_ubatch" else 0,
                      "maximum": MAX_CONTEXT}
        elif p.kind == "flag_on":
            schema = {"type": "boolean", "default": True}
        elif p.kind == "page":
            schema = {"type": "integer", "minimum": 1, "maximum": MAX_PAGE, "default": 1}
        elif p.kind == "gib" and p.name in ("max_memory", "ram", "gpu_memory"):
            schema = {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_MEMORY_GIB}
        elif p.kind == "gib":
            schema = {"type": "number", "minimum": 0, "maximum": MAX_MEMORY_GIB}
        elif p.kind == "flag":
            schema = {"type": "boolean", "default": False}
        elif p.kind in ("rate", "tps"):
            schema = {"type": "number", "exclusiveMinimum": 0, "maximum": 100_000}
        elif p.kind == "quality":
            from tpscalc.catalog.quants import ladder_names

            above = list(ABOVE_LADDER) if p.name == "max_quality" else []
            schema = {"type": "string", "enum": above + ladder_names()}
        elif p.kind in ("choice", "runtime"):
            schema = {"type": "string", "enum": list(p.choices)}
        elif p.kind == "cpu":  # the table's names (a looser spelling resolves too: "7950X")
            from tpscalc.catalog import store

            schema = {"type": "string", "enum": [c.name for c in store.cpus()]}
        elif p.kind in ("ram_type", "pcie"):
            schema = {"type": "string",
                      "pattern": RAM_TYPE_PATTERN if p.kind == "ram_type" else PCIE_PATTERN}
        else:
            schema = {"type": "string", "pattern": NO_CONTROL_CHARACTERS}
        if schema["type"] == "string" and name not in BLANK_MEANS_DEFAULT:
            schema["minLength"] = 1  # an empty value is refused (`_value`), so documented so
        out.append({"name": name, "in": "query", "required": False, "description": p.help,
                    "schema": schema})
    return out


def field_names(target: Literal["query", "filters"]) -> tuple[str, ...]:
    """The attribute names of Query or Filters (tests check the table covers them all)."""
    return tuple(f.name for f in fields(Query if target == "query" else Filters))
