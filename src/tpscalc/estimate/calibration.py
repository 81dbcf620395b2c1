"""Fitted speed-model parameters (from tools/calibrate.py) as frozen dataclasses, and their lookup.

Parameters come in four levels: a device (card + backend) measured in the calibration data,
its family (backend + chip architecture, e.g. "cuda:ada-lovelace" or "metal:apple-m3"), its
vendor's driver under the backend (decode only: "vulkan:amd", "vulkan:intel"), and the backend
alone. The level used for a card decides the confidence label and the width of the range.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from tpscalc.catalog.frozen import FrozenValue
from tpscalc.catalog.schema import Card
from tpscalc.catalog.slug import slugify
from tpscalc.estimate.speed_terms import memory_class
from tpscalc.estimate.types import Confidence

LEVELS: tuple[Confidence, ...] = ("high", "medium", "low")


@dataclass(frozen=True, eq=False, repr=False)
class BackendParams(FrozenValue):
    """Backend-wide parameters: decode overhead, and fallbacks for unmeasured families."""

    # share of card bandwidth reached on weights + KV cache: its measured vendors' drivers'
    # level pooled (tools/calibrate._backends), for a vendor with no level of its own
    decode_efficiency: float
    overhead_per_token_us: float  # fixed cost of one generated token, microseconds
    overhead_per_layer_us: float  # extra fixed cost per layer, µs (one fit for all backends)
    # ε: share of the combined prompt rate (speed.combined_tflops, from the matrix rate
    # llama.cpp's prompt kernels use: speed_terms.prompt_matrix_tflops) reached
    prefill_efficiency: float
    prefill_quantized_factor: float = 1.0  # ε multiplier for quantized weights (dequantization)
    prefill_tensor_share: float = 1.0  # w: share of prompt work timed by the matrix (tensor) rate
    # ε multiplier without flash attention (llama-bench -fa 0): the attention scores written,
    # soft-maxed and read back as separate kernels per layer; 1.0 where unmeasured
    prefill_no_flash_attn_factor: float = 1.0
    # k of this backend's attention kernels (None: the calibration-wide k); flash-attention
    # kernels differ per backend (tensor-core MMA on CUDA, WMMA or vector kernels on ROCm)
    prefill_attention_efficiency: float | None = None
    # k of its attention where it runs on the matrix units beside kernels on the shader ALUs
    # (speed_terms.splits_attention: ROCm's WMMA flash attention and its batched GEMMs
    # without flash attention, against its tile kernel; None: k)
    prefill_matrix_attention_efficiency: float | None = None
    # φ of this backend's MoE expert GEMMs (None: the calibration-wide φ)
    prefill_expert_gemm_efficiency: float | None = None
    # ε multiplier of its prompt GEMMs on Intel Xe2's XMX engines (speed_terms.xe2_coopmat:
    # Vulkan builds with PR #18178's tiles), on their XMX peak; 1.0 where unmeasured
    prefill_xe2_coopmat_factor: float = 1.0


@dataclass(frozen=True, eq=False, repr=False)
class LevelParams(FrozenValue):
    """Efficiencies fitted for one family or one device."""

    decode_efficiency: float | None
    prefill_efficiency: float | None
    n_measurements: int = 0


@dataclass(frozen=True, eq=False, repr=False)
class Band(FrozenValue):
    """Quantiles of measured ÷ predicted speed at one confidence level
    (range = estimate × these)."""

    low_ratio: float
    high_ratio: float
    n: int = 0


@dataclass(frozen=True, eq=False, repr=False)
class MeasuredSpeed(FrozenValue):
    """A real llama.cpp measurement for one card, model and quantization."""

    tokens_per_s: float
    test: str  # "tg128", "tg512", "pp512", ...
    backend: str
    source: str = ""
    kind: str = "decode"  # or "prefill"


@dataclass(frozen=True, eq=False, repr=False)
class Calibration(FrozenValue):
    """Everything the speed model needs that was fitted on measurements."""

    backends: dict[str, BackendParams]
    families: dict[str, LevelParams] = field(default_factory=dict)  # key: family_key()
    devices: dict[str, LevelParams] = field(default_factory=dict)  # key: device_key()
    vendors: dict[str, LevelParams] = field(default_factory=dict)  # key: vendor_key(); decode
    decode_bands: dict[str, Band] = field(default_factory=dict)  # key: confidence level
    prefill_bands: dict[str, Band] = field(default_factory=dict)
    measured: dict[str, tuple[MeasuredSpeed, ...]] = field(default_factory=dict)  # measured_key()
    backend_aliases: dict[str, str] = field(
        default_factory=dict
    )  # "sycl" -> "vulkan" when unfitted
    # How older llama.cpp builds differed ("decode|cuda|0": extra µs per layer; "prefill|cuda|0":
    # log ε shift). Estimates are for current builds; these only let cross-validation compare
    # like with like.
    era_terms: dict[str, float] = field(default_factory=dict)
    # Δ(1/η) of a memory class ("hbm", "unified") over GDDR, added to any level's 1/η.
    class_offsets: dict[str, float] = field(default_factory=dict)
    # Decode dequantization work per weight read, in FP32 operations at the card's shader rate
    # (speed_terms.shader_tflops), by dequantization class ("k", "legacy", "float", "mxfp4"),
    # where a calibration sets one (synthetic ones). The fit sets none: empty, estimates take
    # the work counted from llama.cpp's kernels (speed_terms.KERNEL_DEQUANT_OPS).
    dequant_flops_per_weight: dict[str, float] = field(default_factory=dict)
    # Decode attention at depth: multiplier on its FLOPs at the shader rate (0: KV read only).
    attention_decode_factor: float = 0.0
    # Prefill attention (the quadratic term) runs at this share of the GEMM rate.
    prefill_attention_efficiency: float = 1.0
    # MoE prefill: fixed time of one expert GEMM where llama.cpp runs one per expert
    # (speed_terms.expert_gemm_loop, moe_expert_gemms_per_token), µs.
    moe_expert_gemm_us: float = 0.0
    # MoE prefill: φ, the share of the dense GEMMs' rate the routed experts' GEMMs reach
    # (speed_terms.moe_tile_flops_per_token); a backend's own where it has one.
    moe_expert_gemm_efficiency: float = 1.0
    # MoE decode: what each routed expert matrix a token multiplies
    # (speed_terms.moe_expert_matrices_per_token) costs beyond its weights, as MB read at the
    # card's bandwidth, by chip maker (card.vendor: "AMD"): every maker with MoE decode rows,
    # 0 where the fit gave none; a maker absent was never measured (speed.moe_cost_measured).
    moe_matrix_mb: dict[str, float] = field(default_factory=dict)
    # How many model families (novelty.family_of) the MoE decode rows that fitted each maker's
    # moe_matrix_mb came from. A cost from one family's routing and expert shapes is no
    # measurement of another's: the range of such a maker's MoE decode says so
    # (speed.moe_cost_general). Empty: a calibration without the count (every cost general).
    moe_matrix_families: dict[str, int] = field(default_factory=dict)
    # A driver's decode kernels' own rate, GB/s (vendor_key: "vulkan:intel"): where the
    # bytes a token reads take a time per byte that no card's bandwidth sets on top of the
    # bandwidth's, a read of B bytes costs B/(η·bandwidth) + B/(η·R), i.e. η × R/(R+bandwidth)
    # (speed.kernel_rate_share). Fitted only where the drivers' devices show it
    # (tools/calibrate.py kernel_rates); absent elsewhere (bandwidth alone).
    decode_kernel_rate_gb_s: dict[str, float] = field(default_factory=dict)
    # MoE decode where the backend multiplies the routed experts in a matrix-matrix kernel
    # (speed_terms.decode_expert_gemm_flops: Vulkan, BF16 experts): 1 / the share of the card's
    # shader rate those tile FLOPs reach (0: none measured; speed.CardTerms.expert_tile_factor
    # then times them as the card's unquantized prompt GEMMs run).
    decode_expert_gemm_factor: float = 0.0
    # Prefill under the power limit (speed_terms.power_factor): watts per peak matrix TFLOPS
    # below which a card clocks down, and the exponent of the fall (0: no term).
    prefill_power_w_per_tflops: float = 0.0
    prefill_power_exponent: float = 0.0
    # The models whose rows were fitted (estimate/novelty.py: how far a model is from them).
    measured_models: tuple[str, ...] = ()
    # Their layer kinds (novelty.kind_of: "dense|full", "moe|swa", ...).
    measured_kinds: tuple[str, ...] = ()
    # The conditions (CONDITIONS) each measured device's fitted decode rows hold, by
    # device_key(): a device's range widens for a condition it was never measured in
    # (speed.condition_bands).
    decode_conditions: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # The same of each measured device's fitted prompt rows.
    prefill_conditions: dict[str, tuple[str, ...]] = field(default_factory=dict)
    notes: str = ""


def arch_slug(card: Card) -> str:
    """Chip family of a card as a slug: "ada-lovelace", "rdna-3-0", "apple-m3";
    vendor if unknown."""
    if card.vendor == "Apple":
        # "Apple M3 Max (40-core GPU)" -> "apple-m3": the generation, whatever the tier.
        words = card.name.replace("(", " ").split()
        gen = next((w for w in words if len(w) >= 2 and w[0] in "Mm" and w[1:].isdigit()), "m")
        return _slug(f"apple {gen}")
    return _slug(card.architecture or card.vendor or "unknown")


@cache  # a few dozen architectures for 850 cards
def _slug(text: str) -> str:
    return slugify(text)


def family_key(card: Card, backend: str) -> str:
    """Calibration key of a card's family under a backend: "cuda:ada-lovelace"."""
    return f"{backend}:{arch_slug(card)}"


def prefill_family_key(card: Card, backend: str) -> str:
    """Key of a card's prompt-speed family: its family's, but a unified-memory chip other than
    Apple's (GB10, Jetson, APUs) has one of its own ("cuda:blackwell-2-0+unified"). A prompt is
    compute-bound, and such a chip computes within a power budget it shares with its CPU
    (GB10: 140 W for both), not at its architecture's discrete boards' clocks; the GB10's
    prompts had set the Blackwell family's prompt level 15 % under the GeForce RTX 50 cards'.
    Decode keeps the architecture's family: its memory-class offset tells unified memory apart."""
    key = family_key(card, backend)
    if card.vendor != "Apple" and memory_class(card) == "unified":
        return f"{key}+unified"
    return key


# Chip families that run llama.cpp's GPU kernels as another family does: RDNA 3.5 (gfx1150,
# gfx1151) has RDNA 3's GFX11 instruction set (https://llvm.org/docs/AMDGPUUsage.html,
# processors table), and ggml-cuda's GGML_CUDA_CC_IS_RDNA3 takes both (ggml/src/ggml-cuda/
# common.cuh), so it gets the same MMQ, WMMA and flash-attention paths.
FAMILY_LINEAGE = {"rdna-3-5": "rdna-3-0"}


def inherited_prefill_efficiency(card: Card, backend: str, cal: Calibration,
                                 backend_efficiency: float) -> float:
    """ε for a card whose own prompt family (prefill_family_key) is unmeasured: its
    architecture's family under `backend` (for a non-Apple unified chip, its discrete
    siblings': its shared power budget is the power term's, speed_terms.power_factor), else
    the family whose kernels it shares (FAMILY_LINEAGE), else `backend_efficiency`. (A class
    factor for unified chips was tried: GB10 and Jetson AGX Orin prompt at their families'
    level, the Strix Halo at 0.6-0.8 of RDNA 3's, so one factor moved each the wrong way.)"""
    slug = arch_slug(card)
    for fam in (slug, FAMILY_LINEAGE.get(slug)):
        level = cal.families.get(f"{backend}:{fam}") if fam else None
        if level is not None and level.prefill_efficiency is not None:
            return level.prefill_efficiency
    return backend_efficiency


def vendor_key(card: Card, backend: str) -> str:
    """Calibration key of a card's vendor under a backend: "vulkan:amd", "vulkan:intel".

    One API, several drivers: llama.cpp's Vulkan backend runs on RADV/AMDVLK, Intel's ANV and
    NVIDIA's driver, each compiling its shaders its own way and with its own vendor-tuned
    kernel choices (ggml-vulkan.cpp picks subgroup sizes and mul_mat_id paths per vendor), so a
    decode efficiency fitted on Intel Arc cards says little about a Radeon under the same API.
    """
    return f"{backend}:{_slug(card.vendor or 'unknown')}"


def unmeasured_backend(cal: Calibration, nearest: BackendParams) -> BackendParams:
    """Parameters for a backend with no measurement and no alias: the decode level and
    per-token cost of every measured driver pooled (row-weighted mean of 1/η over
    `Calibration.vendors`, of the per-token cost over their backends), the rest `nearest`'s.
    One other backend's own level would be one API's drivers' (Vulkan's on Intel Arc and
    Radeon), which has nothing to say about an unmeasured one; the pool is where a typical
    llama.cpp GEMV kernel stands. Without vendor levels, `nearest` as it is."""
    levels = [(v.n_measurements, v.decode_efficiency, k.partition(":")[0])
              for k, v in cal.vendors.items()
              if v.decode_efficiency and v.n_measurements > 0 and k.partition(":")[0]
              in cal.backends]
    n = sum(w for w, _, _ in levels)
    if not n:
        return nearest
    u = sum(w / eta for w, eta, _ in levels) / n
    per_token = sum(w * cal.backends[be].overhead_per_token_us for w, _, be in levels) / n
    return replace(nearest, decode_efficiency=round(1.0 / u, 4),
                   overhead_per_token_us=round(per_token, 1))


# A row's conditions that a device's other rows do not tell: a MoE's (routed expert matrices,
# their kernels) and a deep cache's (attention reading >= 16k tokens of KV: a decode's depth, a
# prompt token's mean context, speed.prompt_mean_context). Band keys "condition-out|moe" and
# "condition-out|deep", of decode and of prompts (tools/calibrate.py, condition_ratios).
DEEP_TOKENS = 16384
CONDITION_OUT = "condition-out"
CONDITIONS = ("moe", "deep")


def conditions_of(moe: bool, depth_tokens: float) -> tuple[str, ...]:
    """The CONDITIONS of a decode or a prompt: of a MoE, at a depth (a prompt: a mean context)
    of `depth_tokens`."""
    return (("moe",) if moe else ()) + (("deep",) if depth_tokens >= DEEP_TOKENS else ())


def device_key(card_name: str, backend: str) -> str:
    """Calibration key of one measured device: "cuda:GeForce RTX 4090"."""
    return f"{backend}:{card_name}"


def measured_key(card_name: str, model_name: str, quant: str) -> str:
    """Key of the measured-speed table: "GeForce RTX 4090|Llama 2-7B|Q4_0"."""
    return f"{card_name}|{model_name}|{quant.upper()}"


def lookup_measured(
    cal: Calibration,
    card_name: str,
    model_name: str,
    quant: str,
    backend: str | None = None,
    kind: str = "decode",
) -> MeasuredSpeed | None:
    """The held `kind` measurement for this card, model and quant (same backend, then fastest)."""
    held = cal.measured.get(measured_key(card_name, model_name, quant))
    if not held:  # most rows of a report: nothing measured
        return None
    rows = tuple(r for r in held if r.kind == kind)
    if backend is not None and any(r.backend == backend for r in rows):
        rows = tuple(r for r in rows if r.backend == backend)
    return max(rows, key=lambda r: r.tokens_per_s, default=None)


def _level(d: dict[str, Any]) -> LevelParams:
    return LevelParams(
        d.get("decode_efficiency"), d.get("prefill_efficiency"), int(d.get("n_measurements", 0)),
    )


def from_dict(d: dict[str, Any]) -> Calibration:
    """Build a Calibration from the JSON written by tools/calibrate.py."""
    return Calibration(
        backends={k: BackendParams(**v) for k, v in d["backends"].items()},
        families={k: _level(v) for k, v in d.get("families", {}).items()},
        devices={k: _level(v) for k, v in d.get("devices", {}).items()},
        vendors={k: _level(v) for k, v in d.get("vendors", {}).items()},
        decode_bands={k: Band(**v) for k, v in d.get("decode_bands", {}).items()},
        prefill_bands={k: Band(**v) for k, v in d.get("prefill_bands", {}).items()},
        measured={
            k: tuple(MeasuredSpeed(**m) for m in v) for k, v in d.get("measured", {}).items()
        },
        backend_aliases=dict(d.get("backend_aliases", {})),
        era_terms=dict(d.get("era_terms", {})),
        class_offsets=dict(d.get("class_offsets", {})),
        dequant_flops_per_weight=dict(d.get("dequant_flops_per_weight", {})),
        attention_decode_factor=float(d.get("attention_decode_factor", 0.0)),
        prefill_attention_efficiency=float(d.get("prefill_attention_efficiency", 1.0)),
        moe_expert_gemm_us=float(d.get("moe_expert_gemm_us", 0.0)),
        moe_expert_gemm_efficiency=float(d.get("moe_expert_gemm_efficiency", 1.0)),
        moe_matrix_mb=dict(d.get("moe_matrix_mb", {})),
        moe_matrix_families={k: int(v) for k, v in d.get("moe_matrix_families", {}).items()},
        decode_kernel_rate_gb_s={k: float(v)
                                 for k, v in d.get("decode_kernel_rate_gb_s", {}).items()},
        decode_expert_gemm_factor=float(d.get("decode_expert_gemm_factor", 0.0)),
        prefill_power_w_per_tflops=float(d.get("prefill_power_w_per_tflops", 0.0)),
        prefill_power_exponent=float(d.get("prefill_power_exponent", 0.0)),
        measured_models=tuple(d.get("measured_models", ())),
        measured_kinds=tuple(d.get("measured_kinds", ())),
        decode_conditions={k: tuple(v) for k, v in d.get("decode_conditions", {}).items()},
        prefill_conditions={k: tuple(v) for k, v in d.get("prefill_conditions", {}).items()},
        notes=d.get("notes", ""),
    )
