"""Decode and prefill speed of llama.cpp on a card: time-per-token formulas, vectorised over cards.

Decode (one request) is memory-bound plus a fixed per-token cost and two compute terms:
    t = (weights read per token + KV cache at context) / (η × bandwidth)
        + (a + b × layers) µs  [+ a MoE's routed expert matrices × the maker's MB / bandwidth]
        + c_q × weights multiplied / S  +  c_att × attention FLOPs at the depth / S
        [+ f × 2 × 32 × routed expert weights / S where Vulkan multiplies BF16 experts in its
           matrix-matrix kernel's 32-column tile: decode_expert_gemm_work]
S is the card's FP32 shader rate (speed_terms.shader_tflops); c_q, the decode kernels' work per
weight of the quantization, counted from llama.cpp's source (speed_terms.KERNEL_DEQUANT_OPS, not
fitted), is what keeps HBM cards (A100, H100: low S for their bandwidth) below their bandwidth
on k-quants. 1/η = the level's 1/η plus a memory-class offset
(HBM, unified), and η never exceeds 1: no estimate reads faster than the spec.
Prefill is compute-bound with a bandwidth floor (the weights are read once per micro-batch):
    t(prompt) = max(prompt × ((GEMM FLOPs + MoE small-GEMM loss + attention FLOPs / k) / (ε × R)
                              + expert GEMMs per token × their fixed time),
                    ⌈prompt / ubatch⌉ × weights / (η × bandwidth))
with R = P × 1 / (w / T + (1 − w) / F); attention (quadratic in the depth) runs at k × the peak
rate of the units its kernels use (speed_terms.attention_tflops and matrix_attention: FP16
tensor cores on CUDA; on ROCm the matrix units without flash attention, and with it RDNA's
WMMA for heads of at most 128 dimensions shared by pairs of query heads or more in builds
since 2026; else, as on Vulkan, the shader ALUs), so it is charged as GEMM work × R ÷ that
rate ÷ k;
the expert GEMMs run in whole column tiles of the backend's kernel (MMQ's 128 on CUDA and
ROCm: speed_terms.moe_tile_columns), an expert of b rows paying ceil(b / tile) full tiles
(speed_terms.moe_tile_flops_per_token), their FLOPs at a fitted share φ of the dense GEMMs'
rate (a ragged set of small GEMMs fills the GPU worse; φ per backend), and where llama.cpp
runs them one library GEMM per expert (unquantized experts on CUDA / ROCm without MMF:
speed_terms.expert_gemm_loop) each takes a fixed time (speed_terms.moe_expert_gemms_per_token).
P ≤ 1 is the power limit (speed_terms.power_factor): a card with few board watts per peak matrix
TOPS clocks down in a long prompt.
T is the rate of llama.cpp's prompt GEMMs on the card (speed_terms.prompt_matrix_tflops): for
quantized weights on NVIDIA the int8 tensor-core rate MMQ uses (ggml-cuda/mmq.cuh; DP4A on
Pascal), for F16 the full FP16 tensor rate; F is the FP32 shader rate, on which the quantized
blocks are unpacked inside the GEMM; w (per backend) is the share of the work that scales with
T where they are (quantized weights in MMQ builds; 1 for F16 GEMMs and older builds). The floor
reads all the weights once per micro-batch: a MoE's batch of hundreds of tokens touches nearly
every expert, which is what bounds gpt-oss-120b's prompt speed on a 273 GB/s GB10.
η, ε, w, a, b come from `Calibration` (tools/calibrate.py), per device, family or backend.

Each formula runs on one row's floats (decode_estimates, prefill_estimates: one row at a time,
so a CLI answer does not pay numpy's ~45 ms import) and on numpy columns of many rows
(speed_columns.py: a rig report's ~1,750 device rows): the same operations in the same order,
so the same floats (elementwise.py).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from tpscalc.catalog.frozen import FrozenValue
from tpscalc.catalog.schema import Card
from tpscalc.estimate.calibration import (
    CONDITION_OUT,
    CONDITIONS,
    DEEP_TOKENS,
    BackendParams,
    Band,
    Calibration,
    conditions_of,
    device_key,
    family_key,
    inherited_prefill_efficiency,
    prefill_family_key,
    unmeasured_backend,
    vendor_key,
)
from tpscalc.estimate.elementwise import Num as Value
from tpscalc.estimate.elementwise import where
from tpscalc.estimate.novelty import driver_band, widened_by
from tpscalc.estimate.speed_terms import (
    UNDATED_BUILD,
    attention_tflops,
    decode_expert_gemm_flops,
    dequant_class,
    device_class,
    efficiency_class,
    emulated_dot_work,
    expert_gemm_loop,
    kernel_dequant_flops,
    matrix_attention,
    moe_tile_columns,
    moe_tile_flops_per_token,
    power_factor,
    prompt_matrix_tflops,
    shader_tflops,
    splits_attention,
    xe2_coopmat,
)
from tpscalc.estimate.sycl_kernels import runs_reordered
from tpscalc.estimate.types import Bound, Confidence, DecodeEstimate, PrefillEstimate

# llama.cpp's default physical batch for prompt processing (n_ubatch = 512, common/common.h).
DEFAULT_UBATCH = 512
# No estimate reads faster than the spec bandwidth (fitted η above 1 is the overhead term
# and caches trading places with the bandwidth term, not a faster memory).
ETA_MAX = 1.0
_FALLBACK_BAND = Band(0.6, 1.5)  # used only when a calibration carries no band for a level
# The top of the attention efficiency k (tools/calibrate.ATTENTION_EFFICIENCY_GRID starts at it):
# a backend with no deep prompts of its own takes the k chosen for all, and its deep prompts'
# range reaches the speed at this k (attention_top).
ATTENTION_EFFICIENCY_CAP = 1.0


_VENDOR_BACKENDS = {"NVIDIA": "cuda", "AMD": "rocm", "Apple": "metal"}


def default_backend(card: Card) -> str:
    """Backend llama.cpp users run on this card: cuda (NVIDIA), rocm (AMD), metal (Apple), vulkan.

    Intel defaults to vulkan, not sycl: the calibration holds Vulkan measurements of several
    Arc cards and SYCL ones of a single card (the Arc Pro B70).
    """
    return _VENDOR_BACKENDS.get(card.vendor, "vulkan")


# ---- formula terms (floats) -----------------------------------------------------------------

# A model term: one value for every row, or one per row.
Num = float | Sequence[float]


def _per_row(values: Num, n: int) -> list[float]:
    """`values` as one float per row: a scalar repeated, or a sequence of `n` values."""
    if not hasattr(values, "__len__"):
        return [float(values)] * n
    out = [float(v) for v in cast(Sequence[float], values)]
    if len(out) != n:
        raise ValueError(f"expected one value per row ({n}), got {len(out)}")
    return out


def _flags(values: bool | Sequence[bool], n: int) -> list[bool]:
    """`values` as one bool per row: a scalar repeated, or a sequence of `n` values."""
    if not hasattr(values, "__len__"):
        return [bool(values)] * n
    return [bool(v) for v in cast(Sequence[bool], values)]


# The formulas below take floats or numpy columns of rows (elementwise.py: `Value`).


def memory_seconds(n_bytes: Value, bandwidth_gb_s: Value, efficiency: Value) -> Value:
    """Time to stream `n_bytes` at `efficiency` × bandwidth (10^9 B/s), s."""
    return n_bytes / (efficiency * bandwidth_gb_s * 1e9)


def kernel_reads(read: Value, factor: Value, slowest: Value) -> tuple[Value, Value]:
    """The weights' bytes per token at the fitted kernels' rate (`read` × `factor`: SYCL's
    unreordered types on an Intel GPU, sycl_kernels.kernel_read_factors) and the bytes the
    range's low end reads beyond them (`read` × `slowest` less those, none where that is
    less: `slowest` 0 means `factor`), B."""
    fitted = read * factor
    extra = read * slowest - fitted
    return fitted, where(extra > 0.0, extra, 0.0)


def moe_matrix_mb(card: Card, cal: Calibration) -> float:
    """Calibration.moe_matrix_mb of the card's maker: the MB beyond its weights that each routed
    expert matrix a token multiplies costs (a few-MB mul_mat_vec_id per expert does not stream
    like a dense matrix; the fit finds it on AMD and Intel chips under every backend, not on
    NVIDIA's); 0 for a maker without one."""
    return cal.moe_matrix_mb.get(card.vendor or "", 0.0)


def moe_matrix_seconds(expert_matrices: Value, matrix_mb: Value, bandwidth_gb_s: Value) -> Value:
    """Extra time of a token's `expert_matrices` routed expert matrix-vector products, each
    `matrix_mb` (moe_matrix_mb) read at the card's bandwidth, s."""
    return expert_matrices * matrix_mb * 1e6 / (bandwidth_gb_s * 1e9)


def overhead_seconds(n_layers: Value, per_token_us: Value, per_layer_us: Value) -> Value:
    """Fixed cost of one token (kernel launches, synchronisation), s."""
    return (per_token_us + per_layer_us * n_layers) * 1e-6


def decode_seconds_per_token(
    read_bytes: Value,
    kv_bytes: Value,
    n_layers: Value,
    bandwidth_gb_s: Value,
    efficiency: Value,
    per_token_us: Value,
    per_layer_us: Value,
) -> tuple[Value, Value]:
    """(memory time, overhead time) of one generated token, s; their sum is the token's time."""
    read = read_bytes + kv_bytes
    return (
        memory_seconds(read, bandwidth_gb_s, efficiency),
        overhead_seconds(n_layers, per_token_us, per_layer_us),
    )


def prompt_mean_context(prompt_tokens: int, depth_tokens: int = 0) -> float:
    """Mean number of earlier tokens each prompt token attends to (causal mask), tokens."""
    return depth_tokens + (prompt_tokens - 1) / 2


def prefill_flops_per_token(
    params_active: float, attention_layers: int, n_heads: int, head_dim: int, mean_context: float
) -> float:
    """FLOPs to process one prompt token: 2 × active parameters + attention over the context.

    Attention per layer and head: Q·Kᵀ and softmax·V are each head_dim multiply-adds per
    earlier token, so 2 × 2 × head_dim × context FLOPs.
    """
    return 2.0 * params_active + 4.0 * attention_layers * n_heads * head_dim * mean_context


def combined_tflops(tensor_tflops: float, fp32_tflops: float, tensor_share: float) -> float:
    """Rate of a prompt's mixed work, 1 / (w / T + (1 − w) / F), TFLOPS (NaN where T is unknown)."""
    t, f, w = float(tensor_tflops), float(fp32_tflops), float(tensor_share)
    if not (math.isfinite(f) and f > 0):
        f = t  # no FP32 rate known: the tensor rate alone
    return 1.0 / (w / t + (1.0 - w) / f)


def prefill_seconds(
    prompt_tokens: int,
    flops_per_token: Value,
    tflops: Value,
    efficiency: Value,
    weights_bytes: Value,
    bandwidth_gb_s: Value,
    decode_efficiency: Value,
    ubatch: int = DEFAULT_UBATCH,
    fixed_s_per_token: Value = 0.0,
) -> tuple[Value, Value]:
    """(compute time, weight-streaming floor) to process a prompt, s;
    `tflops` from combined_tflops; `fixed_s_per_token`: time per token that is no FLOPs
    (MoE expert GEMMs' fixed cost), s."""
    compute = prompt_tokens * (flops_per_token / (efficiency * tflops * 1e12)
                               + fixed_s_per_token)
    passes = math.ceil(prompt_tokens / ubatch)
    return compute, passes * memory_seconds(weights_bytes, bandwidth_gb_s, decode_efficiency)


# ---- parameters per card ---------------------------------------------------------------------


@dataclass(frozen=True, eq=False, repr=False)  # eq, hash, repr: FrozenValue
class CardParams(FrozenValue):
    """The fitted parameters that apply to one card under one backend, with their confidence."""

    decode_efficiency: float
    prefill_efficiency: float
    per_token_us: float
    per_layer_us: float
    prefill_quantized_factor: float
    decode_confidence: Confidence
    prefill_confidence: Confidence
    prefill_tensor_share: float = 1.0
    backend: str = "cuda"
    prefill_attention_efficiency: float = 1.0
    prefill_no_flash_attn_factor: float = 1.0
    # φ: share of the dense GEMMs' rate the MoE expert GEMMs reach (moe_tile_flops_per_token)
    expert_gemm_efficiency: float = 1.0
    # False where the card's driver (its vendor under the backend, or the backend itself) has
    # no fitted decode level: its η is a pool's, and its ranges widen (novelty.driver_band)
    driver_measured: bool = True
    # False where the backend's attention efficiency k was not fitted on deep prompts of its
    # own (it takes the one chosen for all): a deep prompt's range reaches k's cap
    attention_measured: bool = True
    # k of the backend's attention on the matrix units where its kernels split
    # (speed_terms.splits_attention), and whether deep prompts of its own fitted it
    matrix_attention_efficiency: float = 1.0
    matrix_attention_measured: bool = True
    # ε multiplier of the prompt GEMMs on an Intel Xe2 card's XMX engines under ggml-vulkan's
    # tuned tiles (speed_terms.xe2_coopmat), on their XMX peak
    xe2_coopmat_factor: float = 1.0
    # False where the asked backend borrows another's parameters (an unfitted SYCL: Vulkan's):
    # it borrows their levels, not the other's kernel-specific rules (xe2_coopmat's tiles)
    own_kernels: bool = True


def _backend_params(backend: str, cal: Calibration) -> BackendParams:
    """The backend's parameters; an unfitted backend borrows its alias's (sycl -> vulkan),
    else the pooled decode level of every measured driver (calibration.unmeasured_backend)."""
    for name in (backend, cal.backend_aliases.get(backend, "")):
        if name in cal.backends:
            return cal.backends[name]
    return unmeasured_backend(cal, cal.backends[_backend_name(backend, cal)])


def _backend_name(backend: str, cal: Calibration) -> str:
    """The fitted backend whose parameters `backend` uses (itself, its alias, or vulkan)."""
    for name in (backend, cal.backend_aliases.get(backend, ""), "vulkan"):
        if name in cal.backends:
            return name
    return next(iter(cal.backends))


class CardTerms:
    """A card's own speed terms under one backend and calibration, worked out once and shared
    by every row on that card (a rig report's ~850 rows, every report of a serving worker):
    its parameters, shader rate, ranges, and per format its dequantization work and prompt
    rate (filled as formats are asked); the same as a row of operands for the formulas over
    columns (speed_columns.py)."""

    __slots__ = ("attention", "cal", "card", "condition_bands", "condition_operands",
                 "decode_band", "decode_operands", "dequant", "matrix_mb", "operands", "params",
                 "prefill_bands", "prefill_condition_bands", "prefill_condition_operands",
                 "rates", "reorders", "shader", "tile_factor", "tiles")

    def __init__(self, card: Card, backend: str | None, cal: Calibration) -> None:
        self.card, self.cal = card, cal  # kept so that their ids are never reused
        self.params = p = _card_params(card, backend, cal)
        self.shader = shader_tflops(card) or math.nan
        # the weights' read factor applies (sycl_kernels: SYCL reorders on Intel GPUs only)
        self.reorders = runs_reordered(card.vendor)
        self.decode_band = decode_band(cal, p.decode_confidence, p.driver_measured, p.backend,
                                       card)
        asked = backend or default_backend(card)
        self.condition_bands = condition_bands(cal, card, asked, p)
        self.condition_operands = condition_operands(self.condition_bands)
        self.prefill_condition_bands = condition_bands(cal, card, asked, p, prefill=True)
        self.prefill_condition_operands = condition_operands(self.prefill_condition_bands)
        self.prefill_bands = {moe: prefill_band(cal, p.prefill_confidence, card, p.backend, moe,
                                                p.driver_measured)
                              for moe in (False, True)}
        self.dequant: dict[str, float] = {}  # c_q per format, at the shader rate
        # (quantized, bf16, int8_mmq, attention on the matrix units, build date) -> (sustained
        # GEMM rate, attention slowdown)
        self.rates: dict[tuple[bool, bool, bool, bool, str | None], tuple[float, float]] = {}
        # attention_terms' answers per (quantized, bf16, int8_mmq, wmma_shape, flash_attn,
        # build_date)
        self.attention: dict[tuple[bool, bool, bool, bool, bool, str | None],
                             tuple[float, float, float, float]] = {}
        self.tiles: dict[int, int] = {}  # MoE expert GEMM tile per micro-batch's tokens
        self.tile_factor: float | None = None  # expert_tile_factor's answer, once asked
        self.matrix_mb = moe_matrix_mb(card, cal)
        # decode_figures' operands that are the card's own: bandwidth, η, the two overheads,
        # the MB per routed expert matrix, the shader rate, the range
        self.decode_operands = (card.bandwidth_gb_s, p.decode_efficiency, p.per_token_us,
                                p.per_layer_us, self.matrix_mb, self.shader,
                                self.decode_band.low_ratio, self.decode_band.high_ratio)
        self.operands: dict[tuple[bool, bool, bool, bool, int, bool], tuple[float, ...]] = {}

    def prefill_operands(self, quantized: bool, bf16: bool, int8_mmq: bool, flash_attn: bool,
                         rows: int, wmma_shape: bool = False) -> tuple[float, ...]:
        """prefill_times' and prefill_rate's operands that are the card's own, kept: the GEMM
        rate and attention's slowdown (prompt_rate, for a model of `wmma_shape` attention and
        a current build), ε, the attention efficiency, bandwidth,
        η, the MoE tile at `rows` tokens a micro-batch and the expert GEMMs' φ, the dense and
        the MoE range, 1 where the expert GEMMs run one per expert (else 0), and the k the
        range's top takes (attention_top)."""
        key = (quantized, bf16, int8_mmq, flash_attn, rows, wmma_shape)
        found = self.operands.get(key)
        if found is None:
            p, dense, moe = self.params, self.prefill_bands[False], self.prefill_bands[True]
            tf, slower, k_att, k_top = self.attention_terms(quantized, bf16, int8_mmq,
                                                            wmma_shape, flash_attn)
            found = self.operands[key] = (
                tf, slower, prefill_efficiency(p, quantized, flash_attn), k_att,
                self.card.bandwidth_gb_s, p.decode_efficiency, float(self.moe_tile(rows)),
                p.expert_gemm_efficiency, dense.low_ratio, dense.high_ratio, moe.low_ratio,
                moe.high_ratio, self.expert_gemm_loop(quantized, bf16), k_top)
        return found

    def attention_terms(self, quantized: bool, bf16: bool, int8_mmq: bool, wmma_shape: bool,
                        flash_attn: bool, build_date: str | None = None,
                        ) -> tuple[float, float, float, float]:
        """(GEMM rate, attention's slowdown, its efficiency, the efficiency the range's top
        takes) of a prompt on this card (prompt_rate, attention_efficiency, attention_top).
        A row on the matrix units of a backend whose kernels split
        (speed_terms.splits_attention), where no deep prompt of the backend fitted that
        kernel's efficiency: estimated as the shader kernel runs it, nothing measured saying
        it runs faster, the top at the matrix units' rate. Kept."""
        key = (quantized, bf16, int8_mmq, wmma_shape, flash_attn, build_date)
        found = self.attention.get(key)
        if found is not None:
            return found
        p = self.params
        matrix = matrix_attention(self.card, p.backend, wmma_shape, flash_attn,
                                  kernel_date(p, build_date))
        split = matrix and splits_attention(p.backend)
        tf, slower = self.prompt_rate(quantized, bf16, int8_mmq, matrix, build_date)
        if split and not p.matrix_attention_measured:
            _, shader = self.prompt_rate(quantized, bf16, int8_mmq, build_date=build_date)
            k = p.prefill_attention_efficiency
            found = (tf, shader, k, max(k * shader / slower, attention_top(p)))
        else:
            found = (tf, slower, attention_efficiency(p, split), attention_top(p, split))
        self.attention[key] = found
        return found

    def expert_gemm_loop(self, quantized: bool, bf16: bool) -> float:
        """1.0 where this card's backend runs a MoE prompt's expert GEMMs one per expert, each
        with its fixed time (speed_terms.expert_gemm_loop), else 0.0."""
        return float(expert_gemm_loop(self.card, self.params.backend, quantized, bf16))

    def dequant_work(self, quant: str) -> float:
        """c_q of `quant` on this card (speed.dequant_work), kept."""
        c_q = self.dequant.get(quant)
        if c_q is None:
            c_q = self.dequant[quant] = dequant_work(self.card, self.params.backend, self.cal,
                                                     quant)
        return c_q

    def prompt_rate(self, quantized: bool, bf16: bool, int8_mmq: bool,
                    on_matrix: bool = False, build_date: str | None = None,
                    ) -> tuple[float, float]:
        """(the prompt GEMMs' sustained rate, TFLOPS; attention's slowdown, on the matrix
        units with `on_matrix`: speed_terms.matrix_attention) of this card in a build of
        `build_date` (None: a current one; speed._prompt_rate), kept."""
        kind = (quantized, bf16, int8_mmq, on_matrix, build_date)
        rate = self.rates.get(kind)
        if rate is None:
            rate = self.rates[kind] = _prompt_rate(self.card, self.params, self.cal, *kind)
        return rate

    def expert_tile_factor(self) -> float:
        """decode_expert_gemm_work's factor on this card: the fitted
        Calibration.decode_expert_gemm_factor; in a fit with no such rows, the shader rate ÷
        the rate this card's unquantized prompt GEMMs reach (ε × its BF16 prompt rate): the
        same mul_mm kernel, timed as a prompt runs it; 0 where either rate is unknown."""
        if self.tile_factor is None:
            fitted = self.cal.decode_expert_gemm_factor
            if fitted:
                self.tile_factor = fitted
            else:
                rate = self.prompt_rate(False, True, True)[0] * prefill_efficiency(
                    self.params, False, True)
                prior = self.shader / rate if rate > 0 else math.nan
                self.tile_factor = prior if math.isfinite(prior) and prior > 0 else 0.0
        return self.tile_factor

    def moe_tile(self, rows: int) -> int:
        """speed_terms.moe_tile_columns of this card under its backend, per `rows`, kept."""
        tile = self.tiles.get(rows)
        if tile is None:
            tile = self.tiles[rows] = moe_tile_columns(self.card, self.params.backend, rows)
        return tile


# (id(card), backend, id(calibration)) -> the card's terms: a report asks for each card's
# twice (decode, prefill), the site for every card on every page.
_TERMS_MEMO: dict[tuple[int, str | None, int], CardTerms] = {}
TERMS_MEMO_SIZE = 8192  # entries; emptied when full


def card_terms(card: Card, backend: str | None, cal: Calibration) -> CardTerms:
    """The CardTerms of `card` under `backend` and `cal`, memoised."""
    key = (id(card), backend, id(cal))
    held = _TERMS_MEMO.get(key)
    if held is not None and held.card is card and held.cal is cal:
        return held
    if len(_TERMS_MEMO) >= TERMS_MEMO_SIZE:
        _TERMS_MEMO.clear()
    terms = _TERMS_MEMO[key] = CardTerms(card, backend, cal)
    return terms


def card_params(card: Card, backend: str | None, cal: Calibration) -> CardParams:
    """Parameters for `card`:
    the device's own if measured, else its family's, else the backend's."""
    return card_terms(card, backend, cal).params


def dequant_work(card: Card, backend: str, cal: Calibration, quant: str) -> float:
    """c_q of `quant` on `card`, FLOP-equivalents per weight at the shader rate: the work its
    kernels do per weight (dequant_flops), plus the int8 dot products' emulation where its
    kernels under `backend` have no hardware dot product (speed_terms.emulated_dot_work, in
    Q4_0's units)."""
    c_q = dequant_flops(cal, backend, quant)
    extra = emulated_dot_work(card, backend, quant)  # > 0 without int8 dot products
    if extra:
        c_q += extra * dequant_flops(cal, backend, "Q4_0")
    return c_q


def _prompt_rate(card: Card, p: CardParams, cal: Calibration, quantized: bool, bf16: bool,
                 int8_mmq: bool, on_matrix: bool = False, build_date: str | None = None,
                 ) -> tuple[float, float]:
    """(the prompt GEMMs' sustained rate, TFLOPS; attention's slowdown against it);
    `on_matrix`: the attention runs on the matrix units (attention_slowdown); `build_date`:
    the build's (None: a current one). On Xe2's XMX engines the rate takes their fitted factor
    (gemm_tflops), which the attention, on the same engines (speed_terms.matrix_attention),
    takes too: the whole prompt's time scales as an ε factor's does."""
    build_date = kernel_date(p, build_date)
    peak = card_prefill_tflops(card, p.prefill_tensor_share, quantized, int8_mmq, p.backend,
                               bf16, build_date)
    power = power_factor(card, cal.prefill_power_w_per_tflops, cal.prefill_power_exponent,
                         quantized, int8_mmq, p.backend, bf16, build_date)
    # attention runs at k × its own units' rate: charged as GEMM-rate work × the GEMMs' peak ÷
    # the attention kernels' peak
    return (peak * _xe2_factor(card, p, quantized, bf16, build_date) * power,
            attention_slowdown(card, p.backend, peak, on_matrix))


def kernel_date(p: CardParams, build_date: str | None) -> str | None:
    """The build date the kernel rules take (speed_terms' dated rules): the row's, but an
    undated (older) one where the backend borrows another's parameters (an unfitted SYCL takes
    Vulkan's levels, not ggml-vulkan's Xe2 tiles)."""
    return build_date if p.own_kernels else UNDATED_BUILD


def gemm_tflops(card: Card, p: CardParams, quantized: bool, int8_mmq: bool = True,
                bf16: bool = False, build_date: str | None = None) -> float:
    """The card's prompt GEMM rate under its parameters' backend, TFLOPS (card_prefill_tflops;
    NaN if unknown), × the fitted factor of Xe2's XMX engines where they run it
    (speed_terms.xe2_coopmat, in a build of `build_date`, None: a current one; kernel_date)."""
    build_date = kernel_date(p, build_date)
    return _xe2_factor(card, p, quantized, bf16, build_date) * card_prefill_tflops(
        card, p.prefill_tensor_share, quantized, int8_mmq, p.backend, bf16, build_date)


def _xe2_factor(card: Card, p: CardParams, quantized: bool, bf16: bool,
                build_date: str | None) -> float:
    """The fitted factor of Xe2's XMX engines where they run the prompt's GEMMs
    (speed_terms.xe2_coopmat at `build_date`, already kernel_date's; not for BF16 weights),
    else 1."""
    on_xmx = xe2_coopmat(card, p.backend, build_date, bf16 and not quantized)
    return p.xe2_coopmat_factor if on_xmx else 1.0


def _card_params(card: Card, backend: str | None, cal: Calibration) -> CardParams:
    asked = backend or default_backend(card)
    be = _backend_params(asked, cal)
    dev = cal.devices.get(device_key(card.name, asked))
    fam = cal.families.get(family_key(card, asked))
    pre_fam = cal.families.get(prefill_family_key(card, asked))
    # the vendor's driver under the backend; without a level of its own, the backend's pooled
    # one
    eta, eta_conf = be.decode_efficiency, "low"
    ven = cal.vendors.get(vendor_key(card, asked))
    driver = ven is not None and ven.decode_efficiency is not None
    if ven is not None:
        eta = ven.decode_efficiency if ven.decode_efficiency is not None else eta
    eps = inherited_prefill_efficiency(card, asked, cal, be.prefill_efficiency)
    eps_conf = "low"
    for dec_level, pre_level, conf in ((fam, pre_fam, "medium"), (dev, dev, "high")):
        if dec_level is not None and dec_level.decode_efficiency is not None:
            eta, eta_conf = dec_level.decode_efficiency, conf
        if pre_level is not None and pre_level.prefill_efficiency is not None:
            eps, eps_conf = pre_level.prefill_efficiency, conf
    eta = effective_eta(eta, cal.class_offsets.get(efficiency_class(card), 0.0),
                        kernel_rate_share(card.bandwidth_gb_s,
                                          cal.decode_kernel_rate_gb_s.get(vendor_key(card, asked))))
    k = be.prefill_attention_efficiency or cal.prefill_attention_efficiency
    return CardParams(
        eta,
        eps,
        be.overhead_per_token_us,
        be.overhead_per_layer_us,
        be.prefill_quantized_factor,
        cast(Confidence, eta_conf),
        cast(Confidence, eps_conf),
        be.prefill_tensor_share,
        _backend_name(asked, cal),
        k,
        be.prefill_no_flash_attn_factor,
        be.prefill_expert_gemm_efficiency or cal.moe_expert_gemm_efficiency,
        driver,
        be.prefill_attention_efficiency is not None,
        be.prefill_matrix_attention_efficiency or k,
        be.prefill_matrix_attention_efficiency is not None,
        be.prefill_xe2_coopmat_factor,
        _backend_name(asked, cal) == asked,
    )


def dequant_flops(cal: Calibration, backend: str, quant: str) -> float:
    """Decode work per weight of `quant` under `backend`, FLOP-equivalents: a class's work where
    the calibration sets one ("cuda:k", else "k": synthetic calibrations; the fit sets none),
    else the work counted from llama.cpp's kernels (speed_terms.kernel_dequant_flops)."""
    cls = dequant_class(quant)
    for name in (backend, cal.backend_aliases.get(backend, "")):
        if f"{name}:{cls}" in cal.dequant_flops_per_weight:
            return cal.dequant_flops_per_weight[f"{name}:{cls}"]
    if cls in cal.dequant_flops_per_weight:
        return cal.dequant_flops_per_weight[cls]
    return kernel_dequant_flops(quant)


def kernel_rate_share(bandwidth_gb_s: float, rate_gb_s: float | None) -> float:
    """The share of a card's decode level left where its driver's kernels read at their own
    rate R on top of the bandwidth (Calibration.decode_kernel_rate_gb_s): R/(R + bandwidth),
    1 without one. Intel's Arc cards under Vulkan read 160-310 GB/s whatever their
    bandwidth (224 to 608 GB/s): the time per byte is 1/bandwidth + 1/R, not 1/bandwidth."""
    if not rate_gb_s or rate_gb_s <= 0 or bandwidth_gb_s <= 0:
        return 1.0
    return rate_gb_s / (rate_gb_s + bandwidth_gb_s)


def effective_eta(eta: float, class_offset: float, rate_share: float = 1.0) -> float:
    """η with the memory class's offset on 1/η, times the driver's kernel-rate share
    (kernel_rate_share), never above 1 (the spec bandwidth)."""
    return min(ETA_MAX, rate_share / max(1.0 / eta + class_offset, 1e-9))


def compute_seconds(work: Value, tflops: Value) -> Value:
    """Time of `work` FLOP-equivalents at `tflops` (0 where the rate is unknown: NaN, infinite
    or not positive), s."""
    known = (tflops > 0) & (tflops < math.inf)
    return where(known, work / where(known, tflops, 1.0) / 1e12, 0.0)


def decode_band(cal: Calibration, level: str, driver_measured: bool = True,
                backend: str = "", card: Card | None = None) -> Band:
    """The decode range at a confidence level for the card's device class under the fitted
    `backend` ("medium|datacenter HBM|cuda": its held-out devices' own spread, where the
    calibration has one), else the backend's ("low|vulkan"), else the level's; widened for an
    unmeasured driver (novelty.driver_band)."""
    cls = device_class(card) if card is not None else ""
    band = first_band(cal.decode_bands, band_keys(level, cls, backend))
    return driver_band(cal.decode_bands, band, driver_measured)


def band_keys(level: str, cls: str, backend: str, prefill: bool = False) -> tuple[str, ...]:
    """The pools a range at `level` is looked up in, narrowest first (decode_band,
    prefill_band): the device class under the backend ("medium|consumer GDDR|cuda", where
    the class is known), the backend's ("high|vulkan"), for prompts the class's ("low|Apple"),
    then the level's. tools/calibrate.py joins a small class pool with the next one here."""
    keys = [f"{level}|{cls}|{backend}"] if cls else []
    keys.append(f"{level}|{backend}")
    if prefill:
        keys.append(f"{level}|{cls}")
    return (*keys, level)


def first_band(bands: dict[str, Band], keys: tuple[str, ...]) -> Band:
    """The band of the first of `keys` that `bands` holds, else the fallback."""
    return next((bands[k] for k in keys if k in bands), _FALLBACK_BAND)


def condition_bands(cal: Calibration, card: Card, backend: str, p: CardParams,
                    prefill: bool = False) -> dict[str, Band]:
    """The condition-out band (the backend's, "condition-out|moe|cuda", else the pool's,
    "condition-out|moe"; "...|deep") of each decode condition, or with `prefill` each prompt
    condition, that a device with a level of its own ("high") was never measured in: its
    level was fitted on rows without it, and misses as the held-out conditions of the measured
    devices did (tools/calibrate.py, condition_ratios). Devices without a level of their own
    take their family's or backend's band, fitted with whole devices held out, conditions and
    all (a MoE's prompt: the MoE band, prefill_band). But a decode of a MoE on a chip maker
    whose MoE cost was never measured (moe_cost_measured) takes the MoE band at any level: no
    held-out device of that maker stood for it. So does one on a maker whose cost rests on one
    model family's rows (moe_cost_general), the card's own MoE rows included: they measured
    that family."""
    key = device_key(card.name, backend)
    if prefill:
        bands = cal.prefill_bands
        conditions: tuple[str, ...] = () if p.prefill_confidence != "high" else tuple(
            c for c in CONDITIONS if c not in cal.prefill_conditions.get(key, ()))
    else:
        bands, general = cal.decode_bands, moe_cost_general(card, cal)
        if p.decode_confidence == "high":
            held = cal.decode_conditions.get(key, ())
            conditions = tuple(
                c for c in CONDITIONS if c not in held or (c == "moe" and not general))
        else:
            conditions = () if general else ("moe",)
    return {cond: band for cond in conditions
            for band in [bands.get(f"{CONDITION_OUT}|{cond}|{p.backend}")
                         or bands.get(f"{CONDITION_OUT}|{cond}")]
            if band is not None}


def condition_operands(bands: dict[str, Band]) -> tuple[float, ...]:
    """condition_widened's operands: the (low, high) ratio of each CONDITIONS' band in
    `bands`, 1 where it does not widen."""
    return tuple(r for cond in CONDITIONS for r in (
        (bands[cond].low_ratio, bands[cond].high_ratio) if cond in bands else (1.0, 1.0)))


def moe_cost_measured(card: Card, cal: Calibration) -> bool:
    """True where the calibration fitted the MoE matrix cost of the card's maker
    (Calibration.moe_matrix_mb holds every maker with MoE decode rows, 0 where the fit gave
    none), or fitted none at all (a calibration without the term)."""
    return not cal.moe_matrix_mb or (card.vendor or "") in cal.moe_matrix_mb


# Model families whose MoE decode rows a maker's MoE cost must rest on to stand for any MoE
# (Calibration.moe_matrix_families): one family's routing and expert shapes are one case.
MOE_COST_MIN_FAMILIES = 2


def moe_cost_general(card: Card, cal: Calibration) -> bool:
    """True where the card maker's MoE cost was fitted (moe_cost_measured) on the MoE rows of
    MOE_COST_MIN_FAMILIES model families or more, or the calibration does not count them."""
    if not moe_cost_measured(card, cal):
        return False
    if not cal.moe_matrix_families or not cal.moe_matrix_mb:
        return True
    return cal.moe_matrix_families.get(card.vendor or "", 0) >= MOE_COST_MIN_FAMILIES


def unmeasured_conditions(bands: dict[str, Band], moe: bool, depth_tokens: float) -> list[str]:
    """The conditions of a decode (a prompt) of a MoE or not (`moe`) at `depth_tokens` (a mean
    context) that the card's measured rows never held and a band of `bands` widens its range
    for (CardTerms.condition_bands, CardTerms.prefill_condition_bands)."""
    return [c for c in conditions_of(moe, depth_tokens) if c in bands]


def condition_confidence(terms: CardTerms, moe: bool, depth_tokens: float) -> Confidence:
    """The card's decode confidence, at most "medium" where a condition band widens its range
    (a measured device asked for a condition none of its rows hold)."""
    level = terms.params.decode_confidence
    if unmeasured_conditions(terms.condition_bands, moe, depth_tokens) and level == "high":
        return "medium"
    return level


def condition_widened(tokens_per_s: Value, low: Value, high: Value, moe: Value,
                      depth_tokens: Value, operands: Sequence[Value]) -> tuple[Value, Value]:
    """(low, high) widened by the condition bands (CardTerms.condition_operands: MoE low and
    high ratio, deep low and high; prefill_condition_operands) that apply to a decode (a
    prompt) of a MoE or not (`moe`) at `depth_tokens` (a mean context), on one row's floats or
    on columns of rows."""
    moe_lo, moe_hi, deep_lo, deep_hi = operands
    deep = depth_tokens >= DEEP_TOKENS
    low, high = widened_by(tokens_per_s, low, high, where(moe, moe_lo, 1.0),
                           where(moe, moe_hi, 1.0))
    return widened_by(tokens_per_s, low, high, where(deep, deep_lo, 1.0),
                      where(deep, deep_hi, 1.0))


def prefill_band(cal: Calibration, level: str, card: Card, backend: str = "",
                 moe: bool = False, driver_measured: bool = True) -> Band:
    """The prefill range at a confidence level: a MoE's prompt the MoE band where the
    calibration has one ("medium|moe"), else the band of the card's device class under the
    backend ("medium|consumer GDDR|cuda"), else the backend's ("high|vulkan": as decode's,
    its drivers and builds scatter a class's devices), else its class's ("low|Apple"), else
    the level's; widened for an unmeasured driver (novelty.driver_band)."""
    band = (cal.prefill_bands.get(f"{level}|moe") if moe else None) or first_band(
        cal.prefill_bands, band_keys(level, device_class(card), backend, prefill=True))
    return driver_band(cal.prefill_bands, band, driver_measured)


# ---- one row's figures (floats) or many rows' (columns) --------------------------------------

# decode_figures' bound: which of a token's terms is largest
DECODE_BOUNDS: tuple[Bound, ...] = ("bandwidth", "compute", "overhead")


def decode_figures(read: Value, kv: Value, layers: Value, bandwidth_gb_s: Value,
                   efficiency: Value, per_token_us: Value, per_layer_us: Value,
                   expert_matrices: Value, matrix_mb: Value, c_q: Value,
                   params: Value, att_factor: Value,
                   attention: Value, shader: Value, low_ratio: Value, high_ratio: Value,
                   expert_gemm_work: Value = 0.0, slow_read: Value = 0.0,
                   ) -> tuple[Value, Value, Value, Value, Value]:
    """Decode of one request on a card (decode_estimates' formula), on one row's floats or on
    columns of rows (elementwise.py): (tokens/s, low, high, DECODE_BOUNDS' index, the slowest
    kernels' estimate ÷ tokens/s: DecodeEstimate.slowest_ratio, 1 where `slow_read` is 0).
    `expert_gemm_work`: the experts' matrix-matrix tile work (decode_expert_gemm_work);
    `slow_read`: bytes the low end reads beyond `read` (the slowest kernels' case, B)."""
    mem, over = decode_seconds_per_token(
        read, kv, layers, bandwidth_gb_s, efficiency, per_token_us, per_layer_us)
    mem = mem + moe_matrix_seconds(expert_matrices, matrix_mb, bandwidth_gb_s)
    work = c_q * params + att_factor * attention + expert_gemm_work
    comp = compute_seconds(work, shader)
    tps = 1.0 / (mem + over + comp)
    slowest = 1.0 / (mem + over + comp + memory_seconds(slow_read, bandwidth_gb_s, efficiency))
    # "overhead" if over > max(mem, comp) else "compute" if comp > mem else "bandwidth"
    bound = where((over > mem) & (over > comp), 2, where(comp > mem, 1, 0))
    return tps, slowest * low_ratio, tps * high_ratio, bound, slowest / tps


def decode_expert_gemm_work(expert_params: float, quant: str, terms: CardTerms) -> float:
    """FLOP-equivalents at the shader rate of a generated token's routed experts where the
    card's backend multiplies them in a matrix-matrix kernel (speed_terms.
    decode_expert_gemm_flops × CardTerms.expert_tile_factor), else 0."""
    flops = decode_expert_gemm_flops(expert_params, terms.params.backend, quant)
    return flops * terms.expert_tile_factor() if flops else 0.0


def prefill_times(prompt_tokens: int, flops: Value, attention: Value, moe_extra: Value,
                  slower: Value, attention_efficiency: Value, tflops: Value, efficiency: Value,
                  weights: Value, bandwidth_gb_s: Value, decode_efficiency: Value, ubatch: int,
                  expert_gemms: Value, gemm_us: float) -> tuple[Value, Value]:
    """A prompt's (compute time, weight-streaming floor) on a card (prefill_estimates'
    formula), s, on one row's floats or on columns of rows (elementwise.py); either is NaN or
    infinite where the card's rate is unknown. `expert_gemms` per token take `gemm_us` each."""
    work = flops - attention + moe_extra + attention * slower / attention_efficiency
    gemm_s = expert_gemms * gemm_us * 1e-6
    return prefill_seconds(prompt_tokens, work, tflops, efficiency, weights, bandwidth_gb_s,
                           decode_efficiency, ubatch, gemm_s)


def prefill_rate(prompt_tokens: int, compute: Value, floor: Value, low_ratio: Value,
                 high_ratio: Value) -> tuple[Value, Value, Value, Value, Value]:
    """(tokens/s, low, high, seconds, whether compute bounds it) of a prompt from
    prefill_times' two times (known ones), on floats or columns."""
    total = where(floor > compute, floor, compute)  # max(compute, floor)
    tps = prompt_tokens / total
    return tps, tps * low_ratio, tps * high_ratio, total, compute >= floor


def attention_efficiency(p: CardParams, matrix: bool = False) -> float:
    """The attention efficiency of a prompt: k, or with `matrix` (a row on the matrix units
    of a backend whose kernels split, speed_terms.splits_attention) that kernel's."""
    return p.matrix_attention_efficiency if matrix else p.prefill_attention_efficiency


def attention_top(p: CardParams, matrix: bool = False) -> float:
    """The attention efficiency at the top of a prompt's range: the fitted one
    (attention_efficiency) where the backend's own deep prompts set it, else
    ATTENTION_EFFICIENCY_CAP (nothing measured says its attention kernels run slower)."""
    k = attention_efficiency(p, matrix)
    measured = p.matrix_attention_measured if matrix else p.attention_measured
    return k if measured else max(k, ATTENTION_EFFICIENCY_CAP)


def prefill_efficiency(p: CardParams, quantized: bool, flash_attn: bool) -> float:
    """ε of a card's prompt GEMMs for quantized or unquantized weights, with or without flash
    attention."""
    eps = p.prefill_efficiency * (p.prefill_quantized_factor if quantized else 1.0)
    if not flash_attn:
        eps *= p.prefill_no_flash_attn_factor
    return eps


# ---- public estimates ------------------------------------------------------------------------


def decode_estimates(
    read_bytes_per_token: Num,
    kv_bytes_at_context: Num,
    n_layers: Num,
    cards: Sequence[Card],
    backend: str | None,
    cal: Calibration,
    *,
    params_read: Num = 0.0,
    quant: str | Sequence[str] = "F16",
    attention_flops: Num = 0.0,
    expert_matrices: Num = 0.0,
    depth_tokens: Num = 0.0,
    expert_params: Num = 0.0,
    read_factor: Num = 1.0,
    read_factor_slowest: Num = 0.0,
) -> list[DecodeEstimate]:
    """Decode speed of one request per row (tokens/s), with range, confidence and bound.

    Row i is `cards[i]`; the model terms are scalars (one model on many cards) or sequences of
    the same length (one entry per row, e.g. many models on one card). `params_read`: weights
    multiplied per token (dequantization work); `attention_flops`: attention FLOPs of one token
    at its depth. Both are timed at the card's shader rate with the fitted factors.
    `expert_matrices`: routed expert matrices multiplied per token (MoE), each read as
    Calibration.moe_matrix_mb more at the card's bandwidth (moe_matrix_seconds).
    `depth_tokens`: tokens in the cache before the generated ones (the range of a measured
    device never measured that deep, or on a MoE, widens: condition_bands).
    `expert_params`: routed expert parameters per token, charged their matrix-matrix tile
    where the backend multiplies them so (decode_expert_gemm_work).
    `read_factor`: the weights' read time over the fitted kernels' on an Intel GPU under SYCL
    (sycl_kernels.kernel_read_factors: the types ggml-sycl does not reorder); 1 elsewhere;
    `read_factor_slowest` the same for the range's low end (0: `read_factor`).
    """
    n = len(cards)
    reads, kvs, layers = (_per_row(v, n) for v in (read_bytes_per_token, kv_bytes_at_context,
                                                    n_layers))
    params, attention = _per_row(params_read, n), _per_row(attention_flops, n)
    experts, depths = _per_row(expert_matrices, n), _per_row(depth_tokens, n)
    expert_weights, factors = _per_row(expert_params, n), _per_row(read_factor, n)
    slowest = _per_row(read_factor_slowest, n)
    quants = [quant] * n if isinstance(quant, str) else list(quant)
    att_factor = cal.attention_decode_factor
    out = []
    last: Card | None = None  # the card's own terms are reused while it repeats (a card report)
    for i, c in enumerate(cards):
        if c is not last:
            last, k = c, card_terms(c, backend, cal)
            p, shader, band = k.params, k.shader, k.decode_band
        read, slow = (kernel_reads(reads[i], factors[i], slowest[i]) if k.reorders
                      else (reads[i], 0.0))
        tps, low, high, bound, slowest_ratio = decode_figures(
            read, kvs[i], layers[i], c.bandwidth_gb_s, p.decode_efficiency, p.per_token_us,
            p.per_layer_us, experts[i], k.matrix_mb,
            k.dequant_work(quants[i]), params[i], att_factor,
            attention[i], shader, band.low_ratio, band.high_ratio,
            decode_expert_gemm_work(expert_weights[i], quants[i], k) if expert_weights[i] else 0.0,
            slow)
        conf = p.decode_confidence
        if k.condition_bands:
            low, high = condition_widened(tps, low, high, experts[i] > 0, depths[i],
                                          k.condition_operands)
            conf = condition_confidence(k, experts[i] > 0, depths[i])
        out.append(DecodeEstimate(tps, low, high, conf, DECODE_BOUNDS[bound], None,
                                  slowest_ratio))
    return out


def card_tflops(card: Card) -> float | None:
    """Dense FP16 tensor TFLOPS of a card, else its FP16 shader rate, else its FP32 rate,
    else None."""
    return card.tflops_fp16_dense or card.tflops_fp16_shader or card.tflops_fp32


def card_prefill_tflops(card: Card, tensor_share: float, quantized: bool = True,
                        int8_mmq: bool = True, backend: str = "cuda", bf16: bool = False,
                        build_date: str | None = None) -> float:
    """The card's rate for prompt work with `tensor_share` on the matrix units, TFLOPS;
    NaN if unknown. `quantized`: the weights go through llama.cpp's quantized kernels;
    `int8_mmq`: a build that runs them on int8 tensor cores (speed_terms.prompt_matrix_tflops;
    estimates are for current builds); `backend`: the fitted backend whose kernels run it;
    `bf16`: BF16 weights (speed_terms.vulkan_matrix_tflops); `build_date`: the build's
    (None: a current one)."""
    tensor = prompt_matrix_tflops(card, quantized, int8_mmq, backend, bf16, build_date)
    if tensor is None:
        return float("nan")
    if not (quantized and int8_mmq):
        tensor_share = 1.0  # F16 GEMMs, or weights dequantized apart before a cuBLAS GEMM
    return combined_tflops(tensor, shader_tflops(card) or math.nan, tensor_share)


def attention_slowdown(card: Card, backend: str, gemm_tflops: float,
                       matrix: bool = False) -> float:
    """The prompt GEMMs' rate ÷ the attention kernels' peak rate (speed_terms.attention_tflops;
    `matrix`: on the matrix units); 1 where either is unknown."""
    att = attention_tflops(card, backend, matrix)
    if not att or not math.isfinite(gemm_tflops):
        return 1.0
    return gemm_tflops / att


def prefill_estimates(
    flops_per_token: Num,
    prompt_tokens: int,
    cards: Sequence[Card],
    backend: str | None,
    cal: Calibration,
    weights_bytes: Num = 0.0,
    quantized: bool | Sequence[bool] = True,
    ubatch: int = DEFAULT_UBATCH,
    *,
    attention_flops_per_token: Num = 0.0,
    expert_params: Num = 0.0,
    expert_batch: Num = math.inf,
    expert_gemms: Num = 0.0,
    int8_mmq: bool = True,
    flash_attn: bool = True,
    bf16: bool | Sequence[bool] = False,
    wmma_attention: bool | Sequence[bool] = False,
    build_date: str | None = None,
    context_tokens: Num = 0.0,
) -> list[PrefillEstimate | None]:
    """Prompt speed (tokens/s) and time to first token per row; None where TFLOPS are unknown.

    Rows as in `decode_estimates`. `quantized`: the weights are a quantized type (not
    F16/BF16/F32), which costs llama.cpp dequantization work; `weights_bytes` sets the bandwidth
    floor (0: no floor). `attention_flops_per_token` is the part of `flops_per_token` spent in
    attention (timed at the fitted attention efficiency); `expert_params` and `expert_batch`
    (speed_terms) charge MoE expert GEMMs their whole column tiles; `expert_gemms` (expert
    GEMMs per token, speed_terms.moe_expert_gemms_per_token) their fixed time. `int8_mmq=False`
    replays a build from before llama.cpp's int8 prompt kernels (calibration only);
    `flash_attn=False` a run without flash attention (the backend's fitted factor); `bf16`:
    the unquantized weights are BF16, which some backends run on other units than F16;
    `wmma_attention`: the model's attention heads are of the shape ROCm's WMMA flash-attention
    kernel takes (speed_terms.wmma_attention_shape), which runs them on RDNA's matrix units in
    builds from `build_date` on (speed_terms.matrix_attention; None: a current build,
    calibration replays a row's). `context_tokens`: the mean context a prompt token sees
    (prompt_mean_context), which widens the range of a device never measured that deep
    (condition_bands).
    """
    n = len(cards)
    flops, weights = _per_row(flops_per_token, n), _per_row(weights_bytes, n)
    contexts = _per_row(context_tokens, n)
    attention = _per_row(attention_flops_per_token, n)
    experts, batches = _per_row(expert_params, n), _per_row(expert_batch, n)
    gemms = _per_row(expert_gemms, n)
    quant, is_bf16 = _flags(quantized, n), _flags(bf16, n)
    wmma = _flags(wmma_attention, n)
    out: list[PrefillEstimate | None] = []
    last: Card | None = None  # the card's own terms are reused while it repeats (a card report)
    for i, c in enumerate(cards):
        if c is not last:
            last, k = c, card_terms(c, backend, cal)
            p, bands = k.params, k.prefill_bands
            tile = k.moe_tile(min(prompt_tokens, ubatch))
        tf, slower, k_att, k_top = k.attention_terms(quant[i], is_bf16[i], int8_mmq, wmma[i],
                                                     flash_attn, build_date)
        extra = moe_tile_flops_per_token(experts[i], batches[i], tile, p.expert_gemm_efficiency)
        eps = prefill_efficiency(p, quant[i], flash_attn)
        gemm = gemms[i] * k.expert_gemm_loop(quant[i], is_bf16[i])
        compute, floor = prefill_times(
            prompt_tokens, flops[i], attention[i], extra, slower,
            k_att, tf, eps, weights[i], c.bandwidth_gb_s,
            p.decode_efficiency, ubatch, gemm, cal.moe_expert_gemm_us)
        if not (math.isfinite(compute) and math.isfinite(floor)):  # no known rate
            out.append(None)
            continue
        band = bands[experts[i] > 0]
        tps, low, high, total, by_compute = prefill_rate(prompt_tokens, compute, floor,
                                                         band.low_ratio, band.high_ratio)
        if k_top != k_att and attention[i] > 0:  # top at k's cap, or the matrix units' rate
            top, _ = prefill_times(
                prompt_tokens, flops[i], attention[i], extra, slower, k_top, tf,
                eps, weights[i], c.bandwidth_gb_s, p.decode_efficiency, ubatch, gemm,
                cal.moe_expert_gemm_us)
            high = max(high, prefill_rate(prompt_tokens, top, floor, band.low_ratio,
                                          band.high_ratio)[2])
        if k.prefill_condition_bands:
            low, high = condition_widened(tps, low, high, experts[i] > 0, contexts[i],
                                          k.prefill_condition_operands)
        out.append(PrefillEstimate(tps, low, high, total,
                                   "compute" if by_compute else "bandwidth"))
    return out
