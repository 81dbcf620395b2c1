"""Fit the speed model (estimate/speed.py) on measured llama.cpp speeds; write calibration.json.

    python tools/calibrate.py [--check]

Decode is fitted in its time-per-token form, which is linear in the unknowns once written with
u = 1/η: t = x·(u_backend + δ_class + δ_family + δ_device) + (a + b·layers)·1e-6 + c_q·weights/S +
c_att·attention FLOPs/S + era terms, where x = bytes read per token ÷ card bandwidth, S the
card's shader rate (for a driver with a kernel rate R of its own, kernel_rates, x carries
1/bandwidth + 1/R per byte), c_q the decode kernels' work per weight of the quant, counted from
llama.cpp's source and not fitted (speed_terms.KERNEL_DEQUANT_OPS; plus three times Q4_0's on
NVIDIA chips without DP4A: a known time each row carries, so the bandwidth term has no work
term to trade against) and δ_class the memory class (HBM,
unified LPDDR, GDDR on datacenter and workstation boards). The per-token cost a is the backend's
own (its submission and synchronisation of each token's graph); the per-layer cost b is one for
all backends: llama.cpp's graph launches the same kernels per layer on each, and a backend
measured on one model at one test (ROCm: Llama 2-7B tg128) cannot tell its own b from its 1/η,
which left a device whose rows were set aside predicted from a wrong split. Rows are weighted by
1/t (relative error) and Huber-reweighted (_robust_solve), class, family and device offsets are
ridge-shrunk toward the backend, so a device with one measurement moves its own η but little
else; terms that come out negative are dropped and the fit redone. Older llama.cpp builds (2023,
2024) get their own extra per-layer overhead (they had no CUDA graphs) and half the weight, and
2023 `./main` eval rates their own per-token term; estimates use the newest era. Prefill is
fitted in log space: log(measured ÷ roofline) = log ε + offsets (family offsets by
prefill_family_key: a unified-memory chip's prompts apart from its architecture's discrete
boards'), where the roofline rate mixes
the matrix rate llama.cpp's prompt kernels use (int8 tensor cores in 2025 builds, FP16 cuBLAS
before) and the FP32 shader rate, 1 / (w/T + (1 − w)/F) (w only where quantized blocks are
unpacked inside the GEMM: MMQ builds), with the share w per backend chosen on a grid by the fit
without family and device offsets; rows at their weight-streaming bound (a MoE's experts all
read per micro-batch) stay out; attention at k ≤ 1 × the rate of its flash-attention kernels'
units (k per backend where it has deep prompts, else shared), MoE expert GEMMs charged their
kernel's whole column tiles (speed_terms.moe_tile_flops_per_token: not fitted), their FLOPs
at a share φ of the dense GEMMs' rate (per backend where two of its devices ran both dense and
MoE prompts, else shared; chosen after the other shapes) and a fixed time per expert GEMM
where llama.cpp runs one library GEMM per expert (shared; speed_terms.expert_gemm_loop), and a
power limit (below a
knee of board watts per peak TOPS of the units in use the rate falls as a power γ of the
shortfall; knee and γ shared), all on grids (estimate/speed.py); 2023 `./main` prompt rows get
a fixed time per prompt per backend (the tables of calibration_data.SET_APART stay out of the
fit altogether). Prompt rows without flash attention are fitted at the rate flash attention
would have given them: the backend's median gain over pairs of rows that differ only in
llama-bench's -fa (flash_attn_gain; CUDA +11 % over 29 pairs, ROCm +8 % over 4), so ε is the
flash-attention rate the estimates default to and -fa 0 costs that gain.
Bands (the stated range) are split-conformal ranges counted in devices: the quantiles of
measured ÷ predicted in cross-validation at (1 ± 0.8)/2, moved out by (1 + 1/m) for the m
devices behind the pool (_band_of), so that 80 % of a new device's measurements fall inside;
pooled by the confidence level the prediction reported, for prompts also per device class and
backend where the pool has 3 devices, with a MoE's prompts apart (band_ratios); a class's
pool of fewer than 9 devices joined with the next pool a row would take
(_join_small_class_pools); a "high" band is never wider than the "medium" one
(_cap_high_bands).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import get_args

# Small least-squares problems: BLAS threads only contend for the cores (set before numpy loads).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from calibration_data import Obs, load_observations

from tpscalc.estimate import speed
from tpscalc.estimate.calibration import (
    CONDITION_OUT,
    CONDITIONS,
    LEVELS,
    BackendParams,
    Band,
    Calibration,
    LevelParams,
    MeasuredSpeed,
    conditions_of,
    device_key,
    family_key,
    measured_key,
    prefill_family_key,
    unmeasured_backend,
    vendor_key,
)
from tpscalc.estimate.novelty import DRIVER_OUT, TIER_PREFIX, family_of, kind_of, union
from tpscalc.estimate.speed_terms import (
    DeviceClass,
    decode_expert_gemm_flops,
    device_class,
    efficiency_class,
    expert_gemm_loop,
    matrix_attention,
    moe_tile_columns,
    moe_tile_flops_per_token,
    power_factor,
    shader_tflops,
    splits_attention,
    xe2_coopmat,
)

OUT = ROOT / "src" / "tpscalc" / "catalog" / "data" / "calibration.json"
LAMBDA_FAMILY = 0.1  # ridge on family offsets of u = 1/η (relative-error units; a row weighs ~η²)
LAMBDA_DEVICE = 0.05  # ridge on device offsets: one row moves its device most of the way
LAMBDA_PREFILL_FAMILY = 0.5
LAMBDA_PREFILL_DEVICE = 1.0
# Huber's constant (95 % efficiency under normal errors); reweighting rounds of the decode fit.
HUBER_K = 1.345
HUBER_ITERATIONS = 5
# No row is down-weighted within 10 % of the fit: the spread of repeated llama-bench runs of one
# card across builds and flash-attention settings (measured/README.md: -5 % to +7 %).
HUBER_MIN_CUT = 0.10
OLD_ERA_WEIGHT = 0.5  # "prefer recent builds": rows older than the backend's newest era count half
# Backends whose older builds get their own extra overhead: CUDA, where the same cards were
# measured on 2023, 2024 and 2025 builds and CUDA graphs (llama.cpp PR #6766, 2024) cut the
# per-kernel launch cost. Metal's 2023 and 2024 rows show no such step, so they are pooled.
ERA_BACKENDS = frozenset({"cuda"})
BAND_COVERAGE = 0.80  # share of a new device's measurements a range is to hold (_band_of)
BAND_MIN_DEVICES = 3  # devices a class's (or `./main` rows') prompt pool needs for its own band
# Devices whose extremes hold BAND_COVERAGE of a new device's rows: the extremes of m
# exchangeable devices hold (m - 1) / (m + 1) of the next (split conformal), 80 % at nine.
CONFORMAL_MIN_DEVICES = 9
# Devices a driver's decode level (a vendor under a backend) rests on before other cards take
# it: with one, the backend's, the vendor's and the device's offsets all fit that device's rows
# and the level is the device's (one MoE row of an M2 Ultra had set every Mac's η to 0.45 when
# the Apple table was held out). Below it, other cards get the measured drivers' pooled level
# and the range of a driver never measured (calibration.unmeasured_backend, novelty.driver_band).
DRIVER_MIN_DEVICES = 2
# kernel_rates: a driver's own decode kernel rate is looked for over at least this many of its
# devices (two points draw any line)
KERNEL_RATE_MIN_DEVICES = 3
KERNEL_RATE_ROUNDS = 6  # kernel_rates: fits with the rates found, at most
# Floor on u = 1/η (η ≤ 2): η above 1 can be fitted where caches (Infinity Cache, large L2)
# serve part of the reads or where the overhead term takes time from the bandwidth term.
U_MIN = 0.5
# Backends with no measurements borrow the parameters of one that has them.
BACKEND_ALIASES = {"sycl": "vulkan", "opencl": "vulkan", "cpu": "vulkan"}
# Candidate shares w of prompt work timed by the tensor rate (speed.combined_tflops).
TENSOR_SHARE_GRID = tuple(round(i * 0.05, 2) for i in range(21))
# Prompt rows at or above this share of their weight-streaming bound are left out of the ε fit.
FLOOR_SHARE = 0.7
# Candidate prefill attention efficiencies k (share of the GEMM rate), chosen jointly over all
# backends. (MoE expert GEMMs' partly empty tiles are not fitted: speed_terms.moe_tile_columns.)
ATTENTION_EFFICIENCY_GRID = (speed.ATTENTION_EFFICIENCY_CAP, 0.7, 0.5, 0.35, 0.25, 0.18, 0.12)
# Candidate fixed times of one MoE expert GEMM where llama.cpp runs them one per expert
# (speed_terms.expert_gemm_loop: unquantized experts on ROCm, on CUDA without MMF), µs: a
# library GEMM's launch and set-up, tens of µs.
MOE_GEMM_US_GRID = (0.0, 5.0, 10.0, 20.0, 40.0)
# The expert GEMM time where no fitted row loops over experts (it cannot be told there, and
# zero would say a loop of a thousand library calls a micro-batch is free), µs: ggml-cuda's
# fallback runs, per expert with rows, its GEMM between a conversion of the rows to the weights'
# type and one of the result back (ggml_cuda_op_mul_mat_cublas), three kernels, at about 3.5 µs
# per kernel dispatched in a batch on AMD's HSA runtime (AMD community forum, "HSA: kernel
# dispatch latencies": 7 µs synchronous, 3.5 µs batched).
MOE_GEMM_US_PRIOR = 10.0
# Candidate shares φ of the dense GEMMs' rate that MoE expert GEMMs reach
# (speed_terms.moe_tile_flops_per_token), a backend's own where MOE_OWN_MIN_DEVICES of its
# devices ran both dense and MoE prompts, else the one chosen for all (_prefill_shapes). Down to
# about half the dense rate, no further: the full fit picks 0.55 on CUDA out of a grid reaching
# 0.35, but the fold without llamacpp_calibration.csv (most dense CUDA prompts) then took 0.35
# and passed the GB10's own low level (all its prompts are MoE) off as φ, and its dense CUDA
# prompts came out 48 % too fast.
MOE_GEMM_EFFICIENCY_GRID = (1.0, 0.85, 0.7, 0.55)
MOE_OWN_MIN_DEVICES = 2
# Candidate fixed times of one 2023 `./main` prompt evaluation (pp_main rows), ms: on every
# CUDA card of those tables the 7B rows run slower than the 33B-70B rows would have them, as a
# time per prompt that does not scale with the model would make them (chosen per backend).
MAIN_PROMPT_MS_GRID = (0.0, 10.0, 20.0, 40.0, 80.0)
# Pairs of prompt rows differing only in flash attention a backend needs for its own gain.
FLASH_ATTN_MIN_PAIRS = 3
# Candidate power terms (speed_terms.power_factor): watts per peak matrix TFLOPS below which a
# card clocks down, and the exponent; (0, 0) is no term.
POWER_GRID = ((0.0, 0.0),) + tuple((c, g) for c in (0.8, 1.2, 1.6)
                                   for g in (0.5, 1.0))
# Ridge on memory-class offsets of 1/η (HBM, unified vs GDDR) and on a vendor's driver under a
# backend (calibration.vendor_key): shared by every family of the class or vendor, so lighter
# than a family's, or a driver measured on a few chips leaves most of its level to them.
LAMBDA_CLASS = 0.02
# Decode terms that cannot be negative: dropped and refitted when the fit makes them so.
NON_NEGATIVE = ("a|", "b", "att", "main|", "mx|", "xg")
# A calibration with no fitted terms: speed.dequant_work then gives the kernels' counted work.
KERNELS_ONLY = Calibration(backends={})


# ---- decode ----------------------------------------------------------------------------------

class _Columns:
    """Named columns of a linear design matrix, created on first use."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}

    def __call__(self, name: str) -> int:
        return self.index.setdefault(name, len(self.index))


def _newest_era(obs: Sequence[Obs]) -> dict[str, int]:
    """Newest era per backend in `obs`."""
    out: dict[str, int] = {}
    for o in obs:
        out[o.backend] = max(out.get(o.backend, 0), o.era)
    return out


def _is_old(o: Obs, newest: dict[str, int]) -> bool:
    """True for a row of an older build on a backend that models its eras."""
    return o.backend in ERA_BACKENDS and o.era < newest[o.backend]


def _rate_share(o: Obs, rates: dict[str, float] | None) -> float:
    """The share of `o`'s card's decode level its driver's kernel rate leaves (speed.
    kernel_rate_share; 1 for a driver without one)."""
    return speed.kernel_rate_share(o.card.bandwidth_gb_s,
                                   (rates or {}).get(vendor_key(o.card, o.backend)))


def _decode_rows(obs: Sequence[Obs], cols: _Columns, newest: dict[str, int],
                 fixed_zero: set[str], rates: dict[str, float] | None = None,
                 ) -> tuple[list[dict[int, float]], np.ndarray, np.ndarray, np.ndarray]:
    """The design rows, time per token, row weights, and each row's known time (the
    dequantization work counted from the kernels), s. rates: the drivers' own decode kernel
    rates (kernel_rates), GB/s."""
    rows, target, weight, known = [], [], [], []
    for o in obs:
        ven = vendor_key(o.card, o.backend)
        # the weights at the kernels' own rate (sycl_kernels.read_factors: SYCL's unreordered
        # types on an Intel GPU; 1 elsewhere), and the driver's own per-byte time where it
        # has one: 1/bandwidth + 1/R (speed.kernel_rate_share)
        x = (o.read_bytes * o.read_factor + o.kv_bytes) / (o.card.bandwidth_gb_s * 1e9)
        x /= _rate_share(o, rates)
        r: dict[int, float] = defaultdict(float)
        r[cols(f"u|{o.backend}")] += x
        r[cols(f"v|{ven}")] += x  # the vendor's driver (calibration.vendor_key)
        r[cols(f"f|{family_key(o.card, o.backend)}")] += x
        r[cols(f"d|{device_key(o.card.name, o.backend)}")] += x
        cls = efficiency_class(o.card)
        if cls:
            r[cols(f"c|{cls}")] += x
        if o.expert_matrices and f"mx|{o.card.vendor}" not in fixed_zero:
            # each routed expert matrix's extra cost, as MB at the card's bandwidth, per chip
            # maker under every backend (speed.moe_matrix_seconds)
            r[cols(f"mx|{o.card.vendor}")] += o.expert_matrices * 1e6 / (
                o.card.bandwidth_gb_s * 1e9)
        shader = shader_tflops(o.card)
        # Per-layer cost shared by all backends (module docstring); per-token cost per backend.
        terms = [(f"a|{o.backend}", 1e-6), ("b", o.n_layers * 1e-6)]
        if shader:
            # the kernels' dequantization work is counted, not fitted (speed.dequant_work)
            known.append(speed.dequant_work(o.card, o.backend, KERNELS_ONLY, o.quant)
                         * o.params_read / (shader * 1e12))
            terms.append(("att", o.attn_flops / (shader * 1e12)))
            # experts multiplied in a matrix-matrix kernel (Vulkan, BF16): their tile FLOPs at
            # the shader rate ÷ a fitted share (speed.decode_expert_gemm_work)
            tiles = decode_expert_gemm_flops(o.expert_params, o.backend, o.quant)
            if tiles:
                terms.append(("xg", tiles / (shader * 1e12)))
        else:
            known.append(0.0)
        if o.main_test:
            terms.append(("main|decode", 1e-6))
        for name, value in terms:
            if name not in fixed_zero:
                r[cols(name)] += value
        if _is_old(o, newest):
            r[cols(f"era|{o.backend}|{o.era}")] += o.n_layers * 1e-6
        t = 1.0 / o.tokens_per_s
        rows.append(dict(r))
        target.append(t)
        weight.append(OLD_ERA_WEIGHT if _is_old(o, newest) else 1.0)
    return rows, np.array(target), np.array(weight), np.array(known)


def _robust_solve(rows: list[dict[int, float]], target: np.ndarray, weight: np.ndarray,
                  n_cols: int, ridge: dict[int, float], known: np.ndarray | None = None,
                  ) -> np.ndarray:
    """_ridge_solve with Huber weights (iteratively reweighted): a row whose relative error is
    beyond HUBER_K robust standard deviations (1.4826 × the median absolute error), and beyond
    HUBER_MIN_CUT, counts as that cut ÷ |error| of itself, so that a few odd devices (a
    throttled 70 W T4, an Arc on an early Vulkan build) do not move the terms every other
    device shares."""
    known = np.zeros(len(rows)) if known is None else known
    coef = _ridge_solve(rows, target, weight, n_cols, ridge, known)
    if not rows:  # only the ridge rows: nothing to reweight
        return coef
    for _ in range(HUBER_ITERATIONS):
        pred = known + np.array([sum(coef[j] * v for j, v in r.items()) for r in rows])
        err = np.abs(pred / target - 1.0)
        cut = max(HUBER_K * 1.4826 * float(np.median(err)), HUBER_MIN_CUT)
        huber = np.where(err > cut, cut / np.maximum(err, 1e-12), 1.0)
        coef = _ridge_solve(rows, target, weight * huber, n_cols, ridge, known)
    return coef


def _ridge_solve(rows: list[dict[int, float]], target: np.ndarray, weight: np.ndarray,
                 n_cols: int, ridge: dict[int, float], known: np.ndarray | None = None,
                 ) -> np.ndarray:
    """Weighted least squares on relative error ((known + row) ÷ target) with ridge
    pseudo-rows; `known`: each row's time that no coefficient scales (0 if None)."""
    a = np.zeros((len(rows) + len(ridge), n_cols))
    b = np.zeros(len(rows) + len(ridge))
    for i, r in enumerate(rows):
        s = np.sqrt(weight[i]) / target[i]
        for j, v in r.items():
            a[i, j] = v * s
        b[i] = np.sqrt(weight[i]) * (1.0 - (known[i] if known is not None else 0.0) / target[i])
    for k, (j, lam) in enumerate(sorted(ridge.items())):
        a[len(rows) + k, j] = np.sqrt(lam)
    return np.linalg.lstsq(a, b, rcond=None)[0]


def fit_decode(obs: Sequence[Obs], rates: dict[str, float] | None = None,
               ) -> tuple[dict[str, float], dict[str, int]]:
    """Decode coefficients by name ("u|cuda", "f|cuda:ampere", "b|cuda", ...), and row counts;
    rates: the drivers' own kernel rates (kernel_rates), GB/s."""
    obs = [o for o in obs if o.kind == "decode"]
    newest, fixed_zero = _newest_era(obs), set()
    while True:
        cols = _Columns()
        rows, target, weight, known = _decode_rows(obs, cols, newest, fixed_zero, rates)
        ridge = {j: (LAMBDA_FAMILY if n.startswith("f|") else
                     LAMBDA_CLASS if n.startswith(("c|", "v|")) else LAMBDA_DEVICE)
                 for n, j in cols.index.items() if n[:2] in ("f|", "v|", "d|", "c|")}
        coef = _robust_solve(rows, target, weight, len(cols.index), ridge, known)
        named = {n: float(coef[j]) for n, j in cols.index.items()}
        negative = {n for n, v in named.items() if n.startswith(NON_NEGATIVE) and v < 0}
        if not negative:
            break
        fixed_zero |= negative  # an overhead cannot be negative: drop the term and refit
    counts: dict[str, int] = defaultdict(int)
    for o in obs:
        counts[f"f|{family_key(o.card, o.backend)}"] += 1
        counts[f"d|{device_key(o.card.name, o.backend)}"] += 1
    return named, dict(counts)


def _device_read_times(obs: Sequence[Obs], dec: dict[str, float], rates: dict[str, float],
                       ) -> dict[str, dict[str, tuple[float, float]]]:
    """Per driver (vendor_key), each device's (bandwidth GB/s, fitted time per GB read, s):
    the u + offsets of its decode level ÷ its bandwidth and the share its driver's kernel
    rate leaves (the rates `dec` was fitted with)."""
    out: dict[str, dict[str, tuple[float, float]]] = defaultdict(dict)
    for o in obs:
        ven, dev = vendor_key(o.card, o.backend), device_key(o.card.name, o.backend)
        u = (dec.get(f"u|{o.backend}", 0.0) + dec.get(f"v|{ven}", 0.0)
             + dec.get(f"f|{family_key(o.card, o.backend)}", 0.0) + dec.get(f"d|{dev}", 0.0)
             + dec.get(f"c|{efficiency_class(o.card)}", 0.0))
        bw = o.card.bandwidth_gb_s
        if u > 0:
            out[ven][dev] = (bw, u / bw / _rate_share(o, rates))
    return out


def _read_time_line(points: Sequence[tuple[float, float]], with_rate: bool) -> tuple[float, float]:
    """(α, β) of time per GB = α/bandwidth + β (β = 0 without a rate), least squares on the
    relative error."""
    x = np.array([1.0 / b for b, _ in points])
    y = np.array([t for _, t in points])
    a = np.column_stack([x, np.ones_like(x)]) if with_rate else x[:, None]
    coef = np.linalg.lstsq(a / y[:, None], np.ones_like(y), rcond=None)[0]
    return float(coef[0]), float(coef[1]) if with_rate else 0.0


def _device_out_error(points: Sequence[tuple[float, float]], with_rate: bool) -> float:
    """Median relative error of each device's time per GB from the line through the others."""
    errs = []
    for i, (bw, t) in enumerate(points):
        alpha, beta = _read_time_line([p for j, p in enumerate(points) if j != i], with_rate)
        errs.append(abs((alpha / bw + beta) / t - 1.0))
    return float(np.median(errs))


def kernel_rates(obs: Sequence[Obs]) -> tuple[dict[str, float], dict[str, float]]:
    """The drivers' own decode kernel rates (_rates_from_levels), GB/s, refitted until they
    hold, and the decode fit made with them (fit_decode's coefficients): a fit without a rate
    lends part of a driver's time per byte to the overheads per token and per layer, so the
    rates are read again from the fit made with them."""
    rates: dict[str, float] = {}
    dec = fit_decode(obs)[0]
    for _ in range(KERNEL_RATE_ROUNDS):
        found = _rates_from_levels(obs, dec, rates)
        if found == rates:
            break
        rates = found
        dec = fit_decode(obs, rates)[0]
    return rates, dec


def _rates_from_levels(obs: Sequence[Obs], dec: dict[str, float],
                       rates: dict[str, float]) -> dict[str, float]:
    """The drivers whose decode kernels read at a rate of their own, GB/s (speed.
    kernel_rate_share). For each driver measured on KERNEL_RATE_MIN_DEVICES devices, its
    devices' fitted time per GB read against 1/bandwidth: a line through the origin (the
    bandwidth sets the time) or with an intercept β (a time per byte no bandwidth sets,
    R = α/β). The rate is kept where it binds (R below the bandwidth of the driver's fastest
    measured card) and the line with it predicts each device from the others better than the
    line through the origin: on the 2026 data only Intel's Arc cards under Vulkan (224-608
    GB/s, read at 160-310 GB/s)."""
    out = {}
    for ven, devices in sorted(_device_read_times(obs, dec, rates).items()):
        points = sorted(devices.values())
        if len(points) < KERNEL_RATE_MIN_DEVICES:
            continue
        alpha, beta = _read_time_line(points, True)
        if beta <= 0 or alpha <= 0 or alpha / beta >= max(bw for bw, _ in points):
            continue
        if _device_out_error(points, True) < _device_out_error(points, False):
            out[ven] = float(f"{alpha / beta:.3g}")
    return out


# ---- prefill ---------------------------------------------------------------------------------

def _prefill_work(o: Obs, attention_efficiency: float, tensor_share: float = 1.0) -> float:
    """FLOP-equivalents per prompt token at the GEMMs' rate: GEMMs, MoE experts' partly empty
    column tiles, and attention at k × its own units' rate (speed.attention_slowdown)."""
    return (_gemm_work(o)
            + o.attn_flops / attention_efficiency * _attention_ratio(o, tensor_share))


def _gemm_work(o: Obs, expert_efficiency: float = 1.0) -> float:
    """GEMM FLOPs per prompt token, MoE experts' GEMMs in their kernel's whole column tiles and
    their own FLOPs at `expert_efficiency` (φ) of the dense GEMMs' rate."""
    tile = moe_tile_columns(o.card, o.backend, min(o.prompt_tokens, o.ubatch))
    return (o.flops_per_token - o.attn_flops
            + moe_tile_flops_per_token(o.expert_params, o.expert_batch, tile, expert_efficiency))


def _attention_ratio(o: Obs, tensor_share: float) -> float:
    """The GEMMs' peak rate ÷ the attention kernels' (speed.attention_slowdown)."""
    rate = _peak_tflops(o, tensor_share)
    return speed.attention_slowdown(o.card, o.backend, rate, _on_matrix(o))


def _roofline_tps(o: Obs, tensor_share: float = 1.0, attention_efficiency: float = 1.0) -> float:
    """Prompt tokens/s at 100 % of the card's combined prompt rate, the quantity ε scales."""
    return _peak_tflops(o, tensor_share) * 1e12 / _prefill_work(o, attention_efficiency)


def _mmq(o: Obs) -> bool:
    """True for a row whose build ran quantized prompt GEMMs on int8 tensor cores: 2025 builds
    (MMQ the default from June 2024, llama.cpp PR #8075; 2024 rows are dated by year only and
    the 2024 tables predate it)."""
    return o.era >= 2


def _peak_tflops(o: Obs, tensor_share: float) -> float:
    """The card's combined prompt rate, TFLOPS, for the row's weights and build."""
    return speed.card_prefill_tflops(o.card, tensor_share, o.quantized, _mmq(o), o.backend,
                                     _bf16(o), o.date)


def _on_matrix(o: Obs) -> bool:
    """True for a row whose attention ran on the matrix units (speed_terms.matrix_attention,
    at the row's build date)."""
    return matrix_attention(o.card, o.backend, o.wmma_shape, o.flash_attn, o.date)


def _split_attention(o: Obs) -> bool:
    """True for a row on the matrix units of a backend whose kernels split
    (speed_terms.splits_attention): it takes the backend's km, not its k."""
    return splits_attention(o.backend) and _on_matrix(o)


def _gemm_loop(o: Obs) -> float:
    """1.0 for a row whose expert GEMMs run one per expert (speed_terms.expert_gemm_loop)."""
    return float(expert_gemm_loop(o.card, o.backend, o.quantized, _bf16(o)))


def _bf16(o: Obs) -> bool:
    """True for a row of BF16 weights (speed_terms.vulkan_matrix_tflops: their own GEMM path)."""
    return o.quant.upper() == "BF16"


def _streaming_bound(o: Obs) -> bool:
    """True for a prompt row within FLOOR_SHARE of its weight-streaming bound at the spec
    bandwidth: every micro-batch reads all the weights (a MoE's experts too: with hundreds of
    tokens a batch touches nearly every expert), so its speed says nothing about ε."""
    passes = -(-o.prompt_tokens // o.ubatch)
    bound_tps = o.prompt_tokens / (passes * o.weights_bytes / (o.card.bandwidth_gb_s * 1e9))
    return o.tokens_per_s >= FLOOR_SHARE * bound_tps


def flash_attn_gain(obs: Sequence[Obs]) -> dict[str, float]:
    """log(prompt rate with flash attention ÷ without) per backend: the median over pairs of
    rows that differ only in llama-bench's -fa (same device, model, quant, test and build
    era), where the backend has FLASH_ATTN_MIN_PAIRS of them. A paired estimate: the devices'
    own speeds cancel, which a column beside the ridge-shrunk device offsets would not do."""
    runs: dict[tuple[object, ...], dict[bool, list[float]]] = defaultdict(lambda: defaultdict(list))
    for o in obs:
        if o.kind == "prefill":
            key = (o.backend, o.card.name, o.model, o.quant, o.test, o.era, o.main_test)
            runs[key][o.flash_attn].append(np.log(o.tokens_per_s))
    pairs: dict[str, list[float]] = defaultdict(list)
    for key, by_fa in runs.items():
        if len(by_fa) == 2:
            pairs[str(key[0])].append(float(np.mean(by_fa[True]) - np.mean(by_fa[False])))
    return {be: float(np.median(v)) for be, v in sorted(pairs.items())
            if len(v) >= FLASH_ATTN_MIN_PAIRS}


def _prefill_solve(obs: Sequence[Obs], shares: Sequence[float], newest: dict[str, int],
                   mixed: set[str],
                   shapes: Sequence[tuple[float, ...]] = (
                       (1.0, 0.0, 0.0, 0.0, 1.0),), main_s: float = 0.0,
                   fa_gain: dict[str, float] | None = None,
                   ) -> list[tuple[dict[str, float], float, float, float]]:
    """Ridge fit of log ε and its offsets for each shape (k, power knee and γ, expert GEMM
    time, expert GEMM efficiency φ) and tensor share w.

    Only the target depends on w and the shape (through the roofline), so every combination is
    one right-hand side of the same least-squares problem. Per shape: the coefficients, the w
    whose fit without family and device offsets (as on an unseen family) has the least
    residual plus ridge penalty (ties, e.g.
    Apple where T = F, to the largest w) and that objective.
    """
    cols = _Columns()
    rows, weight = [], []
    gain = fa_gain or {}
    for o in obs:
        r = {cols(f"e|{o.backend}"): 1.0, cols(f"f|{prefill_family_key(o.card, o.backend)}"): 1.0,
             cols(f"d|{device_key(o.card.name, o.backend)}"): 1.0}
        if o.quantized and o.backend in mixed:
            r[cols(f"q|{o.backend}")] = 1.0
        if xe2_coopmat(o.card, o.backend, o.date, _bf16(o)):  # Xe2's XMX engines: their own level
            r[cols(f"x|{o.backend}")] = 1.0
        if _is_old(o, newest):
            r[cols(f"era|{o.backend}|{o.era}")] = 1.0
        if o.main_test:
            r[cols(f"main|{o.backend}")] = 1.0
        rows.append(r)
        weight.append(OLD_ERA_WEIGHT if _is_old(o, newest) else 1.0)
    ridge = {j: (LAMBDA_PREFILL_FAMILY if k.startswith("f|") else LAMBDA_PREFILL_DEVICE)
             for k, j in cols.index.items() if k[:2] in ("f|", "d|")}
    n, ns, nw = len(rows), len(shapes), len(shares)
    a = np.zeros((n + len(ridge), len(cols.index)))
    sw = np.sqrt(np.array(weight))
    for i, r in enumerate(rows):
        for j, v in r.items():
            a[i, j] = v * sw[i]
    for k, (j, lam) in enumerate(sorted(ridge.items())):
        a[n + k, j] = np.sqrt(lam)
    log_rate = np.log([[_peak_tflops(o, w) * 1e12
                        for w in shares] for o in obs])
    # work[i, s, w] = (GEMM work_s + attention work_s × rate_w ÷ attention rate) ÷ power_s
    gemm = {phi: np.array([_gemm_work(o, phi) for o in obs]) for phi in {sh[4] for sh in shapes}}
    att = np.array([o.attn_flops for o in obs])
    split = np.array([_split_attention(o) for o in obs])  # rows that take km (shape's 6th)
    power = {pw: [power_factor(o.card, *pw, o.quantized, _mmq(o), o.backend, _bf16(o), o.date)
                  for o in obs]
             for pw in {sh[1:3] for sh in shapes}}
    ratio = np.array([[_attention_ratio(o, w) for w in shares] for o in obs])  # (n, nw)
    work = np.stack([(gemm[sh[4]][:, None]
                      + (att / np.where(split, sh[5] if len(sh) > 5 else sh[0], sh[0]))[:, None]
                      * ratio)
                     / np.array(power[sh[1:3]])[:, None] for sh in shapes], axis=1)
    log_work = np.log(work)  # (n, ns, nw)
    # The prompt's time per token less the fixed times (expert GEMMs; a `./main` prompt's),
    # at most 3/4 of it: the part that runs at ε × the roofline rate.
    t_tok = np.array([1.0 / o.tokens_per_s for o in obs])
    fixed = np.array([main_s / o.prompt_tokens if o.main_test else 0.0 for o in obs])
    gemms = np.array([o.expert_gemms * _gemm_loop(o) for o in obs])
    # Rows without flash attention are fitted as the rate with it (the paired gain).
    fa = np.array([0.0 if o.flash_attn else gain.get(o.backend, 0.0) for o in obs])
    log_tps = {us: fa - np.log(np.maximum(t_tok - fixed - gemms * us * 1e-6, 0.25 * t_tok))
               for us in {sh[3] for sh in shapes}}
    # target[i, s, w] = log(measured ÷ roofline) = log tps_s − log rate_w + log work_sw
    target = (np.stack([log_tps[sh[3]] for sh in shapes], axis=1)[:, :, None]
              - log_rate[:, None, :] + log_work)
    b = np.zeros((n + len(ridge), ns * nw))
    b[:n] = target.reshape(n, ns * nw) * sw[:, None]
    # The shape and rate are chosen as they do on an unseen family: by the residual of the fit
    # without family and device offsets (with them, a device of two rows absorbs any rate).
    keep = [j for k, j in cols.index.items() if not k.startswith(("d|", "f|"))]
    rows_sel = [i for i in range(a.shape[0]) if i < n or np.any(a[i, keep])]
    a_sel = a[np.ix_(rows_sel, keep)]
    coef_sel = np.linalg.lstsq(a_sel, b[rows_sel], rcond=None)[0]
    objective = np.sum((a_sel @ coef_sel - b[rows_sel]) ** 2, axis=0).reshape(ns, nw)
    best = [min(range(nw), key=lambda k: (round(float(objective[si, k]), 9), -shares[k]))
            for si in range(ns)]
    # The full fit (with offsets) only for each shape's chosen rate.
    chosen = b[:, [si * nw + best[si] for si in range(ns)]]
    coef = np.linalg.lstsq(a, chosen, rcond=None)[0]
    full = np.sum((a @ coef - chosen) ** 2, axis=0)  # with the offsets and their ridge
    return [({k: float(coef[j, si]) for k, j in cols.index.items()}, shares[best[si]],
             float(objective[si, best[si]]), float(full[si])) for si in range(ns)]


def fit_prefill(obs: Sequence[Obs]) -> tuple[dict[str, float], dict[str, int]]:
    """Prefill coefficients by name: log ε ("e|cuda", "f|...", "d|...", "q|cuda"), w ("w|cuda").

    Backends share no coefficient but the attention efficiency k ("k"), the power term, the
    expert GEMM time ("moe_gemm_us") and the expert GEMMs' share of the dense rate φ ("phi"),
    chosen on grids (_prefill_shapes; a backend's own k and φ where its rows tell them,
    "k|cuda" only for a backend with deep prompts, "phi|cuda"); each backend's tensor share w
    on a 0.05 grid; the flash-attention gain ("fa|cuda", flash_attn_gain) of the rows fitted.
    """
    obs = [o for o in obs if o.kind == "prefill" and np.isfinite(_roofline_tps(o))
           and not _streaming_bound(o)]
    newest = _newest_era(obs)
    # The quantized-weights term only where a backend has both kinds (else it is unidentified).
    mixed = {b for b in newest if len({o.quantized for o in obs if o.backend == b}) == 2}
    # k and the expert GEMM time only where rows can tell them apart (deep prompts; MoE prompts
    # whose experts run one GEMM each).
    deep = any(map(_is_deep, obs))
    has_moe = any(np.isfinite(o.expert_batch) for o in obs)
    looped = any(o.expert_gemms * _gemm_loop(o) > 0 for o in obs)
    shapes = [(k, c, g, us, phi) for k in (ATTENTION_EFFICIENCY_GRID if deep else (1.0,))
              for c, g in POWER_GRID
              for us in (MOE_GEMM_US_GRID if looped else (MOE_GEMM_US_PRIOR,))
              for phi in (MOE_GEMM_EFFICIENCY_GRID if has_moe else (1.0,))]
    gain = flash_attn_gain(obs)
    per_be = {be: _prefill_solve([o for o in obs if o.backend == be], TENSOR_SHARE_GRID,
                                 newest, mixed, shapes, fa_gain=gain) for be in sorted(newest)}
    chosen = _prefill_shapes(obs, shapes, per_be)
    out: dict[str, float] = dict(zip(("k", "power_w", "power_exp", "moe_gemm_us", "phi"),
                                     shapes[chosen[""]]))
    for be, res in per_be.items():
        be_obs = [o for o in obs if o.backend == be]
        si = chosen[be]
        coef, share, _, _ = res[si]
        if any(o.main_test for o in be_obs):
            # The ./main fixed time shows within a device (its 7B against its 33B-70B rows),
            # which only the fit with device offsets sees: chosen by that fit's objective.
            tries = [(_prefill_solve(be_obs, TENSOR_SHARE_GRID, newest, mixed, [shapes[si]],
                                     ms / 1e3, gain)[0], ms) for ms in MAIN_PROMPT_MS_GRID]
            (coef, share, _, _), ms = min(tries, key=lambda t: (round(t[0][3], 9), t[1]))
            out[f"main_ms|{be}"] = ms
        if any(_is_deep(o) and _split_attention(o) for o in be_obs):
            # the attention on the matrix units of a backend whose kernels split: its own k
            # (km), chosen on the grid with the backend's shape, as k is
            tries = [shapes[si][:5] + (km,) for km in ATTENTION_EFFICIENCY_GRID]
            res_km = _prefill_solve(be_obs, TENSOR_SHARE_GRID, newest, mixed, tries,
                                    out.get(f"main_ms|{be}", 0.0) / 1e3, gain)
            j = min(range(len(tries)), key=lambda j: (round(res_km[j][2], 9), -tries[j][5]))
            coef, share, _, _ = res_km[j]
            out[f"km|{be}"] = tries[j][5]
        out |= coef | {f"w|{be}": share, f"phi|{be}": shapes[si][4]}
        if any(map(_is_deep, be_obs)):  # a k of its own (else the one for all: its range's
            out[f"k|{be}"] = shapes[si][0]  # top reaches k's cap, speed.attention_top)
        if be in gain:
            out[f"fa|{be}"] = gain[be]
    counts: dict[str, int] = defaultdict(int)
    for o in obs:
        counts[f"f|{prefill_family_key(o.card, o.backend)}"] += 1
        counts[f"d|{device_key(o.card.name, o.backend)}"] += 1
    return out, dict(counts)


def _is_deep(o: Obs) -> bool:
    """A prompt row whose attention is a fifth of its FLOPs or more: one that tells k apart."""
    return bool(o.attn_flops > 0.2 * o.flops_per_token)


def _prefill_shapes(obs: Sequence[Obs], shapes: Sequence[tuple[float, ...]],
                    per_be: dict[str, list[tuple[dict[str, float], float, float, float]]],
                    ) -> dict[str, int]:
    """Index in `shapes` of each backend's shape (k, power knee and γ, expert GEMM time, φ),
    and of the global one (key ""), each chosen by the objective of the fits without family
    and device offsets (as on an unseen family): first k, the power term and the expert GEMM
    time with the expert GEMMs at the dense rate (φ = 1), summed over the backends, a backend
    with deep prompts of its own its own k; then φ at those, a backend's own where
    MOE_OWN_MIN_DEVICES of its devices ran both dense and MoE prompts, else the one best for
    all. In that order φ corrects MoE prompts without moving the dense rows' terms (chosen
    jointly, the GB10's all-MoE prompts traded φ against the power term)."""
    index = {sh: i for i, sh in enumerate(shapes)}
    rests = list(dict.fromkeys(sh[:4] for sh in shapes))
    phis = list(dict.fromkeys(sh[4] for sh in shapes))
    dense_rate = phis[0]  # 1.0: every φ grid starts at the dense rate
    by_be: dict[str, list[Obs]] = defaultdict(list)
    for o in obs:
        by_be[o.backend].append(o)

    def objective(be: str, rest: tuple[float, ...], phi: float) -> float:
        return round(per_be[be][index[(*rest, phi)]][2], 9)

    totals = [sum(objective(be, r, dense_rate) for be in per_be) for r in rests]
    k0, c0, g0, us0 = rests[min(range(len(rests)), key=lambda i: (totals[i], i))]
    rest_of = {}
    for be in per_be:
        ks = ([k for k, c, g, us in rests if (c, g, us) == (c0, g0, us0)]
              if any(map(_is_deep, by_be[be])) else [k0])
        rest_of[be] = min(((k, c0, g0, us0) for k in ks),
                          key=lambda r: objective(be, r, dense_rate))
    phi0 = min(phis, key=lambda p: sum(objective(be, rest_of[be], p) for be in per_be))
    out = {"": index[(k0, c0, g0, us0, phi0)]}
    for be in per_be:
        both = ({o.card.name for o in by_be[be] if o.is_moe}
                & {o.card.name for o in by_be[be] if not o.is_moe})
        phi = (min(phis, key=lambda p: objective(be, rest_of[be], p))
               if len(both) >= MOE_OWN_MIN_DEVICES else phi0)
        out[be] = index[(*rest_of[be], phi)]
    return out


# ---- assemble --------------------------------------------------------------------------------

def _u_floor(o: Obs, rates: dict[str, float] | None) -> float:
    """The least 1/η a level of `o`'s card may take: U_MIN, times the share its driver's kernel
    rate leaves (speed.kernel_rate_share: η is then a level on the slower of the two reads,
    and the spec-bandwidth cap, speed.ETA_MAX, applies to η × that share)."""
    return U_MIN * _rate_share(o, rates)


def _level_keys(o: Obs, prefix: str) -> tuple[str, str, str]:
    """(family, device, the level's own key) of `o` for _levels: a prompt row's family is its
    prefill family (prefill_family_key); the key is the family's ("f") or the device's ("d")."""
    fam = (prefill_family_key if o.kind == "prefill" else family_key)(o.card, o.backend)
    dev = device_key(o.card.name, o.backend)
    return fam, dev, fam if prefix == "f" else dev


def _levels(obs: Sequence[Obs], dec: dict[str, float], pre: dict[str, float],
            prefix: str, rates: dict[str, float] | None = None) -> dict[str, LevelParams]:
    """Family ("f") or device ("d") efficiencies:
    η = 1/(u + δ_f [+ δ_d]), ε = exp(e + δ_f [+ δ_d]) (a prompt row's family: its prefill
    family, prefill_family_key)."""
    out: dict[str, LevelParams] = {}
    counts: dict[str, int] = defaultdict(int)
    floors: dict[str, float] = {}
    for o in obs:
        key = _level_keys(o, prefix)[2]
        floors[key] = min(floors.get(key, U_MIN), _u_floor(o, rates))
    for o in obs:
        fam, dev, key = _level_keys(o, prefix)
        counts[key] += 1
        eta = eps = None
        if f"{prefix}|{key}" in dec:
            u = (dec[f"u|{o.backend}"] + dec.get(f"v|{vendor_key(o.card, o.backend)}", 0.0)
                 + dec[f"f|{fam}"] + (dec[f"d|{dev}"] if prefix == "d" else 0))
            eta = round(1.0 / max(u, floors[key]), 4)
        if f"{prefix}|{key}" in pre:
            e = pre[f"e|{o.backend}"] + pre[f"f|{fam}"] + (pre[f"d|{dev}"] if prefix == "d" else 0)
            eps = round(float(np.exp(e)), 4)
        old = out.get(key, LevelParams(None, None))
        out[key] = LevelParams(
            eta if eta is not None else old.decode_efficiency,
            eps if eps is not None else old.prefill_efficiency,
            counts[key],
        )
    return dict(sorted(out.items()))


def _pooled_u(obs: Sequence[Obs], dec: dict[str, float], backend: str,
              rates: dict[str, float] | None = None) -> float | None:
    """1/η of `backend`'s measured drivers pooled: the row-weighted mean of u + δ_v over its
    vendors' decode rows (None without any). The bare u is not any driver's level once the
    vendors split it (Vulkan: 1/η 1.32 between Radeon's 0.92 and Arc's 1.97)."""
    u = dec.get(f"u|{backend}")
    # each row's level on its card's bandwidth alone (its driver's kernel-rate share taken in)
    per_row = [max((u + dec.get(f"v|{vendor_key(o.card, o.backend)}", 0.0))
                   / _rate_share(o, rates), U_MIN)
               for o in obs if o.kind == "decode" and o.backend == backend] if u else []
    return float(np.mean(per_row)) if per_row else None


def _backends(
    obs: Sequence[Obs], dec: dict[str, float], pre: dict[str, float],
    rates: dict[str, float] | None = None,
) -> dict[str, BackendParams]:
    out = {}
    for be in sorted({o.backend for o in obs}):
        u = _pooled_u(obs, dec, be, rates)
        eta = 1.0 / u if u else 0.5
        out[be] = BackendParams(
            decode_efficiency=round(eta, 4),
            overhead_per_token_us=round(max(dec.get(f"a|{be}", 0.0), 0.0), 1),
            overhead_per_layer_us=round(max(dec.get("b", 0.0), 0.0), 2),
            prefill_efficiency=round(float(np.exp(pre.get(f"e|{be}", np.log(0.3)))), 4),
            prefill_quantized_factor=round(float(np.exp(pre.get(f"q|{be}", 0.0))), 4),
            prefill_no_flash_attn_factor=round(float(np.exp(-pre.get(f"fa|{be}", 0.0))), 4),
            prefill_tensor_share=pre.get(f"w|{be}", 1.0),
            prefill_attention_efficiency=pre.get(f"k|{be}"),
            prefill_matrix_attention_efficiency=pre.get(f"km|{be}"),
            prefill_expert_gemm_efficiency=pre.get(f"phi|{be}"),
            prefill_xe2_coopmat_factor=round(float(np.exp(pre.get(f"x|{be}", 0.0))), 4),
        )
    return out


def _vendors(obs: Sequence[Obs], dec: dict[str, float],
             rates: dict[str, float] | None = None) -> dict[str, LevelParams]:
    """Decode level of each vendor's driver under a backend: η = 1/(u + δ_v)
    (calibration.vendor_key: "backend:vendor"), where its rows come from DRIVER_MIN_DEVICES
    devices or more. MoE rows' extra cost is per chip maker (moe_matrix_mb)."""
    counts: dict[str, int] = defaultdict(int)
    devices: dict[str, set[str]] = defaultdict(set)
    floors: dict[str, float] = {}
    for o in obs:
        key = vendor_key(o.card, o.backend)
        counts[key] += 1
        devices[key].add(o.card.name)
        floors[key] = min(floors.get(key, U_MIN), _u_floor(o, rates))
    out: dict[str, LevelParams] = {}
    for key, n in counts.items():
        u = dec.get(f"u|{key.partition(':')[0]}")
        if not u or f"v|{key}" not in dec or len(devices[key]) < DRIVER_MIN_DEVICES:
            continue
        out[key] = LevelParams(round(1.0 / max(u + dec[f"v|{key}"], floors[key]), 4), None, n)
    return dict(sorted(out.items()))


def _moe_decode_families(obs: Sequence[Obs]) -> dict[str, int]:
    """The chip makers with MoE decode rows in `obs` (those whose MoE matrix cost was fitted),
    each with the number of model families (novelty.family_of) those rows are of."""
    families: dict[str, set[str]] = defaultdict(set)
    for o in obs:
        if o.kind == "decode" and o.expert_matrices:
            families[o.card.vendor or ""].add(family_of(o.model))
    return {v: len(f) for v, f in sorted(families.items())}


def fit(obs: Sequence[Obs]) -> Calibration:
    """Parameters fitted on `obs` (no bands, no measured table)."""
    dec_obs = [o for o in obs if o.kind == "decode"]
    rates, dec = kernel_rates(dec_obs)
    pre, _ = fit_prefill(obs)
    pre_obs = [o for o in obs if o.kind == "prefill"]
    fams = _levels(dec_obs, dec, {}, "f", rates)
    for k, v in _levels(pre_obs, {}, pre, "f").items():
        d = fams.get(k, LevelParams(None, None))
        fams[k] = LevelParams(
            d.decode_efficiency, v.prefill_efficiency, d.n_measurements + v.n_measurements
        )
    devs = _levels(dec_obs, dec, {}, "d", rates)
    for k, v in _levels(pre_obs, {}, pre, "d").items():
        d = devs.get(k, LevelParams(None, None))
        devs[k] = LevelParams(
            d.decode_efficiency, v.prefill_efficiency, d.n_measurements + v.n_measurements
        )
    moe_families = _moe_decode_families(obs)
    eras = {f"decode|{k[4:]}": round(v, 2) for k, v in dec.items() if k.startswith("era|")}
    eras |= {f"prefill|{k[4:]}": round(v, 4) for k, v in pre.items() if k.startswith("era|")}
    eras |= {"decode|main": round(dec.get("main|decode", 0.0), 2)}
    eras |= {f"prefill|main|{k[5:]}": round(v, 4) for k, v in pre.items() if k.startswith("main|")}
    eras |= {f"prefill|main_ms|{k[8:]}": v for k, v in pre.items() if k.startswith("main_ms|")}
    cal = Calibration(
        backends=_backends(obs, dec, pre, rates),
        families=dict(sorted(fams.items())),
        devices=dict(sorted(devs.items())),
        vendors=_vendors(dec_obs, dec, rates),
        backend_aliases=BACKEND_ALIASES,
        era_terms=dict(sorted(eras.items())),
        class_offsets={k[2:]: round(v, 4) for k, v in sorted(dec.items()) if k.startswith("c|")},
        attention_decode_factor=round(max(dec.get("att", 0.0), 0.0), 3),
        prefill_attention_efficiency=pre.get("k", 1.0),
        moe_expert_gemm_us=pre.get("moe_gemm_us", 0.0),
        moe_expert_gemm_efficiency=pre.get("phi", 1.0),
        moe_matrix_mb={v: round(max(dec.get(f"mx|{v}", 0.0), 0.0), 3)
                       for v in moe_families},
        moe_matrix_families=moe_families,
        decode_expert_gemm_factor=round(max(dec.get("xg", 0.0), 0.0), 3),
        decode_kernel_rate_gb_s=rates,
        prefill_power_w_per_tflops=pre.get("power_w", 0.0),
        prefill_power_exponent=pre.get("power_exp", 0.0),
    )
    return _pool_thin_backends(cal, dec_obs)


def _pool_thin_backends(cal: Calibration, dec_obs: Sequence[Obs]) -> Calibration:
    """`cal` with each backend that has decode rows but no driver level (_vendors: too few
    devices) at the measured drivers' pooled decode level and per-token cost
    (calibration.unmeasured_backend): its fitted u is its one device's. That device keeps its
    own level (its offsets were fitted with the backend's)."""
    measured = {k.partition(":")[0] for k in cal.vendors}
    thin = {o.backend for o in dec_obs} - measured
    if not thin or not measured:
        return cal
    backends = {be: unmeasured_backend(cal, p) if be in thin else p
                for be, p in cal.backends.items()}
    return replace(cal, backends=backends)


# ---- predictions through the engine's own code path ------------------------------------------


def predict(cal: Calibration, o: Obs) -> tuple[float, str]:
    """(tokens/s, confidence) that estimate/speed.py gives for the conditions of `o`.

    Rows of older builds get their fitted era term, so that cross-validation compares a
    2023 measurement with a 2023-build prediction (the engine always predicts current builds).
    """
    era = f"{o.backend}|{o.era}"
    if o.kind == "decode":
        d = speed.decode_estimates(
            o.read_bytes,
            o.kv_bytes,
            o.n_layers,
            [o.card],
            o.backend,
            cal,
            params_read=o.params_read,
            expert_matrices=o.expert_matrices,
            expert_params=o.expert_params,
            depth_tokens=o.depth,
            quant=o.quant,
            attention_flops=o.attn_flops,
            read_factor=o.read_factor,
            read_factor_slowest=o.read_factor_slowest,
        )[0]
        extra_s = cal.era_terms.get(f"decode|{era}", 0.0) * o.n_layers * 1e-6
        if o.main_test:
            extra_s += cal.era_terms.get("decode|main", 0.0) * 1e-6
        return 1.0 / (1.0 / d.tokens_per_s + extra_s), d.confidence
    p = _prefill_estimate(cal, o)
    conf = speed.card_params(o.card, o.backend, cal).prefill_confidence
    shift = np.exp(
        cal.era_terms.get(f"prefill|{era}", 0.0)
        + (cal.era_terms.get(f"prefill|main|{o.backend}", 0.0) if o.main_test else 0.0)
    )
    if not p:
        return float("nan"), conf
    main_s = cal.era_terms.get(f"prefill|main_ms|{o.backend}", 0.0) / 1e3 if o.main_test else 0.0
    return 1.0 / (1.0 / (p.tokens_per_s * shift) + main_s / o.prompt_tokens), conf


def _prefill_estimate(cal: Calibration, o: Obs) -> speed.PrefillEstimate | None:
    """estimate/speed.py's prompt estimate for the conditions of prompt row `o`."""
    return speed.prefill_estimates(
        o.flops_per_token,
        o.prompt_tokens,
        [o.card],
        o.backend,
        cal,
        weights_bytes=o.weights_bytes,
        quantized=o.quantized,
        ubatch=o.ubatch,
        attention_flops_per_token=o.attn_flops,
        expert_params=o.expert_params,
        expert_batch=o.expert_batch,
        expert_gemms=o.expert_gemms,
        int8_mmq=_mmq(o),
        flash_attn=o.flash_attn,
        bf16=_bf16(o),
        wmma_attention=o.wmma_shape,
        build_date=o.date,
        context_tokens=_context(o),
    )[0]


def _context(o: Obs) -> float:
    """The depth that sets a row's conditions (conditions_of): a decode's, a prompt token's
    mean context (speed.prompt_mean_context)."""
    if o.kind == "decode":
        return float(o.depth)
    return speed.prompt_mean_context(o.prompt_tokens, o.depth)


def attention_top_ratio(cal: Calibration, o: Obs) -> float:
    """How far above its band a prompt row's range reaches where its backend's attention
    efficiency was not fitted on deep prompts of its own (speed.attention_top): the engine's
    top ÷ (its estimate × its band's top); 1 elsewhere and for decode rows."""
    if o.kind != "prefill" or o.attn_flops <= 0:
        return 1.0
    terms = speed.card_terms(o.card, o.backend, cal)
    if terms.params.attention_measured and terms.params.matrix_attention_measured:
        return 1.0
    est = _prefill_estimate(cal, o)
    band = with_conditions(terms.prefill_bands[o.expert_params > 0],
                           terms.prefill_condition_bands, o)
    if est is None or not est.tokens_per_s > 0:
        return 1.0
    return max(1.0, est.high / (est.tokens_per_s * band.high_ratio))


def cross_validate(
    obs: Sequence[Obs],
    group: Callable[[Obs], str],
    fitter: Callable[[Sequence[Obs]], Calibration] = fit,
) -> list[tuple[Obs, float, str]]:
    """Refit without each group of rows and predict that group: (obs, predicted, confidence)."""
    out = []
    for g in sorted({group(o) for o in obs}):
        cal = fitter([o for o in obs if group(o) != g])
        out += [(o, *predict(cal, o)) for o in obs if group(o) == g]
    return out


def by_device(o: Obs) -> str:
    """Cross-validation group: one device (card name), all backends."""
    return o.card.name


def by_condition(o: Obs) -> str:
    """Cross-validation group: one card, backend, model and quant (the device stays known)."""
    return f"{o.card.name}|{o.backend}|{o.model}|{o.quant}"


def by_family(o: Obs) -> str:
    """Cross-validation group: one family under one backend."""
    return family_key(o.card, o.backend)


def by_driver(o: Obs) -> str:
    """Cross-validation group: one vendor's driver under one backend (calibration.vendor_key;
    a backend of one vendor, Metal or CUDA, goes out whole)."""
    return vendor_key(o.card, o.backend)


def by_model(o: Obs) -> str:
    """Cross-validation group: one model (its family's other models stay known)."""
    return o.model


def by_model_family(o: Obs) -> str:
    """Cross-validation group: one model family, every size (novelty.family_of)."""
    return family_of(o.model)


_PUBLICATION = (re.compile(r"discussions/(\d+)"), re.compile(r"pull/(\d+)"),
                re.compile(r"github\.com/([\w.-]+/[\w.-]+)"),
                re.compile(r"github ([\w.-]+/[\w.-]+)"))


def publication_of(o: Obs) -> str:
    """Cross-validation group: the discussion, pull request or repository the row was
    published in (the source column's first such reference), else the source text. Its rows
    share a build, a harness and often a machine: held out together they are what a user's
    own build is to the fit."""
    for pat in _PUBLICATION:
        m = pat.search(o.source)
        if m:
            return m.group(0)
    return o.source


# The novelty tiers' cross-validations (estimate/novelty.py): band-key prefix, grouping.
TIER_GROUPINGS: tuple[tuple[str, Callable[[Obs], str]], ...] = (
    (TIER_PREFIX["family"], by_model), (TIER_PREFIX["novel"], by_model_family))


def tier_ratios(obs: Sequence[Obs]) -> dict[tuple[str, str], list[tuple[str, float]]]:
    """(device, measured ÷ predicted) of every row predicted without its model, and without its
    family, pooled by kind and "<tier>|<level>" (a MoE's prompts apart, "<tier>|<level>|moe"):
    the ranges of a model nobody measured (estimate/novelty.py). The 2023 `./main` prompt rows,
    a test no estimate is made for, stay out."""
    ratios: dict[tuple[str, str], list[tuple[str, float]]] = defaultdict(list)
    for prefix, grouping in TIER_GROUPINGS:
        for o, pred, conf in cross_validate(obs, grouping):
            if not (np.isfinite(pred) and pred > 0) or o.main_prompt:
                continue
            r = (o.card.name, o.tokens_per_s / pred)
            moe_prompt = o.kind == "prefill" and o.is_moe
            ratios[(o.kind, f"{prefix}|{conf}{'|moe' if moe_prompt else ''}")].append(r)
    return ratios


def band_ratios(obs: Sequence[Obs]) -> dict[tuple[str, str], list[tuple[str, float]]]:
    """(device, measured ÷ predicted) of every row in four cross-validations (a condition, a
    device, a family, a publication out: the last is a build and a harness the fit has not
    seen, which every user's own build is), pooled by kind and key: the confidence level the
    prediction reported; for decode also the level and backend ("low|vulkan": Vulkan's
    held-out devices miss by tens of %, across drivers and builds, CUDA's by a few, and one
    pooled band held 58-67 % of Vulkan's rows under three protocols); for prompts the level and
    the device class ("low|Apple"), the level and backend ("high|vulkan": where a class
    and backend pool has too few devices, the Strix Halo's Vulkan prompts scatter by build as
    Vulkan's GDDR cards do, not as the CUDA and Metal rows of the level's pool) and the
    level, class and backend ("medium|consumer GDDR|cuda"). One pooled prompt band would have
    to cover Apple (prompt speeds within a few % of the fit), CUDA cards (~10 %) and ROCm,
    Vulkan and HBM cards (tens of %) at once, so it would be honest only by being wide
    everywhere. The 2023 `./main` prompt rows, a test no estimate is made for, stay out of the
    others and pool per level and backend ("medium|main|cuda"). A MoE's prompts pool per level
    ("low|moe") and not by class: their expert-GEMM terms rest on three devices and miss per
    model (a GB10 predicted from its gpt-oss rows runs Qwen3-30B-A3B 2.5× faster than that),
    and in the class pools two such rows set a dense band's tail."""
    return pool_ratios([row for grouping in (by_condition, by_device, by_family,
                                             publication_of)
                        for row in cross_validate(obs, grouping)])


def pool_ratios(rows: Sequence[tuple[Obs, float, str]],
                ) -> dict[tuple[str, str], list[tuple[str, float]]]:
    """Cross-validated (obs, predicted, confidence) rows pooled as band_ratios says."""
    ratios: dict[tuple[str, str], list[tuple[str, float]]] = defaultdict(list)
    for o, pred, conf in rows:
        if not (np.isfinite(pred) and pred > 0):
            continue
        r = (o.card.name, o.tokens_per_s / pred)
        if o.main_prompt:
            ratios[(o.kind, f"{conf}|main|{o.backend}")].append(r)
            continue
        ratios[(o.kind, conf)].append(r)
        if o.kind == "decode":
            ratios[(o.kind, f"{conf}|{o.backend}")].append(r)
            ratios[(o.kind, f"{conf}|{device_class(o.card)}|{o.backend}")].append(r)
        elif o.is_moe:
            ratios[(o.kind, f"{conf}|moe")].append(r)
        else:
            cls = device_class(o.card)
            ratios[(o.kind, f"{conf}|{cls}")].append(r)
            ratios[(o.kind, f"{conf}|{o.backend}")].append(r)
            ratios[(o.kind, f"{conf}|{cls}|{o.backend}")].append(r)
    return ratios


def driver_ratios(obs: Sequence[Obs]) -> dict[tuple[str, str], list[tuple[str, float]]]:
    """(device, measured ÷ predicted) of every row predicted with its driver held out
    (by_driver), pooled by kind under novelty.DRIVER_OUT: the range of a driver never
    measured (novelty.driver_band). The 2023 `./main` prompt rows stay out."""
    ratios: dict[tuple[str, str], list[tuple[str, float]]] = defaultdict(list)
    for o, pred, _ in cross_validate(obs, by_driver):
        if np.isfinite(pred) and pred > 0 and not o.main_prompt:
            ratios[(o.kind, DRIVER_OUT)].append((o.card.name, o.tokens_per_s / pred))
    return ratios


def held_conditions(obs: Sequence[Obs], kind: str) -> dict[str, tuple[str, ...]]:
    """The CONDITIONS each device's rows of `kind` ("decode", "prefill") hold, by device_key
    (the `./main` prompt rows, a test no estimate is made for, left out)."""
    held: dict[str, set[str]] = defaultdict(set)
    for o in obs:
        if o.kind == kind and not o.main_prompt:
            held[device_key(o.card.name, o.backend)].update(conditions_of(o.is_moe, _context(o)))
    return {k: tuple(c for c in CONDITIONS if c in v) for k, v in sorted(held.items())}


def condition_ratios(obs: Sequence[Obs]) -> dict[tuple[str, str], list[tuple[str, float]]]:
    """(device, measured ÷ predicted) of each device's decode rows, and apart its prompt rows,
    of one condition (a MoE's, or at depth >= 16k: a prompt's mean context), predicted by a fit
    without them while its other rows of that kind stay, pooled by kind under
    "condition-out|<condition>" and "condition-out|<condition>|<backend>" (a backend's own
    band where BAND_MIN_DEVICES devices stand behind it: CUDA's MoE kernels miss by tens of %,
    ROCm's and Vulkan's by up to 2.8x), where the device kept a level of its own: the range of
    a measured device asked for a condition none of its rows hold (speed.condition_bands). A
    device's level is fitted on what its rows ran; a MoE's routed expert kernels and a deep
    cache's attention are what a dense shallow row does not tell. The `./main` prompt rows
    stay out."""
    ratios: dict[tuple[str, str], list[tuple[str, float]]] = defaultdict(list)
    rows_of: dict[tuple[str, str], int] = defaultdict(int)  # rows per (kind, device)
    # (kind, condition, device) -> rows
    groups: dict[tuple[str, str, str], list[Obs]] = defaultdict(list)
    for o in obs:
        if o.main_prompt:
            continue
        dev = device_key(o.card.name, o.backend)
        rows_of[(o.kind, dev)] += 1
        for cond in conditions_of(o.is_moe, _context(o)):
            groups[(o.kind, cond, dev)].append(o)
    for (kind, cond, dev), held in sorted(groups.items()):
        if len(held) == rows_of[(kind, dev)]:  # no row of the device without it
            continue
        out = {id(o) for o in held}
        cal = fit([o for o in obs if id(o) not in out])
        for o in held:
            pred, conf = predict(cal, o)
            if conf == "high" and np.isfinite(pred) and pred > 0:
                r = (o.card.name, o.tokens_per_s / pred)
                ratios[(kind, f"{CONDITION_OUT}|{cond}")].append(r)
                ratios[(kind, f"{CONDITION_OUT}|{cond}|{o.backend}")].append(r)
    return ratios


def bands(obs: Sequence[Obs]) -> tuple[dict[str, Band], dict[str, Band]]:
    """Decode and prefill bands per confidence level (and, for prompts, per device class and
    backend) from three cross-validations, pooled (band_ratios, bands_from_ratios), with the
    novelty tiers', the unmeasured drivers' and the unmeasured conditions' (tier_ratios,
    driver_ratios, condition_ratios)."""
    return bands_from_ratios({**band_ratios(obs), **tier_ratios(obs), **driver_ratios(obs),
                              **condition_ratios(obs)})


def bands_from_ratios(ratios: dict[tuple[str, str], list[tuple[str, float]]],
                      ) -> tuple[dict[str, Band], dict[str, Band]]:
    """The band of each pool (_band_of). A prompt pool of a class, a class and backend or the
    `./main` rows needs BAND_MIN_DEVICES devices for a band of its own: one device's rows
    share its offset, and a band resting on them would be that device's, not the class's.
    Below it a row takes the next wider pool's (row_band, speed.prefill_band)."""
    out: tuple[dict[str, Band], dict[str, Band]] = ({}, {})
    for i, kind in enumerate(("decode", "prefill")):
        for level in LEVELS:
            r = ratios.get((kind, level)) or ratios.get((kind, "low")) or [("", 0.6), ("", 1.5)]
            out[i][level] = _band_of(r)
    for (kind, key), r in sorted(ratios.items()):
        if ("|" in key or key == DRIVER_OUT) and _devices(r) >= BAND_MIN_DEVICES:
            out[kind == "prefill"][key] = _band_of(r)
    decode, prefill = (_cap_high_bands(_join_small_class_pools(bands, ratios, kind))
                       for bands, kind in zip(out, ("decode", "prefill"), strict=True))
    return decode, prefill


def _join_small_class_pools(bands: dict[str, Band],
                            ratios: dict[tuple[str, str], list[tuple[str, float]]],
                            kind: str) -> dict[str, Band]:
    """Each device class's pool ("high|datacenter HBM|cuda", "low|Apple") of fewer than
    CONFORMAL_MIN_DEVICES devices joined with the next pool a row would take without it
    (speed.band_keys): its extremes hold only (m − 1) / (m + 1) of a new device's rows (50 %
    for three), so its band can say where the class sits apart from the rest, not that it is
    narrower. Three HBM devices held out under CUDA had all run 1.00-1.27x their estimate,
    and a fourth, the scoreboard's H100 SXM5, ran 0.98x."""
    out = dict(bands)
    classes = get_args(DeviceClass)
    for key in sorted(bands, key=lambda k: k.count("|")):  # a wider pool before its class's
        level, _, rest = key.partition("|")
        cls, _, backend = rest.partition("|")
        if (level not in LEVELS or cls not in classes
                or _devices(ratios[(kind, key)]) >= CONFORMAL_MIN_DEVICES):
            continue
        keys = speed.band_keys(level, cls, backend, prefill=kind == "prefill")
        wider = next((out[k] for k in keys[keys.index(key) + 1:] if k in out), None)
        if wider is not None:
            out[key] = union(bands[key], wider)
    return out


def _cap_high_bands(bands: dict[str, Band]) -> dict[str, Band]:
    """Each "high" band no wider than the same key's "medium" one: a prediction from the
    device's own measurements knows all that its family's does. The "high" pools are the
    smallest (rows of devices measured on several models, left out one condition at a time:
    27 CUDA GDDR rows, two of them single odd runs), and their tails had given a measured RTX
    4090 a prompt range twice as wide as an unmeasured card's. The medium and low pools are
    the held-out devices' own (66-246 rows) and stay as measured."""
    out = dict(bands)
    for key, band in sorted(bands.items()):
        level, _, rest = key.partition("|")
        other = bands.get(f"medium|{rest}" if rest else "medium")
        if level == "high" and other is not None and (
                other.high_ratio / other.low_ratio < band.high_ratio / band.low_ratio):
            out[key] = replace(other, n=band.n)
    return out


def slowest_ratio(cal: Calibration, o: Obs) -> float:
    """A decode row's estimate with its weights at the slowest kernels' read factor ÷ its
    estimate (sycl_kernels.read_factors)."""
    fast, slow = (predict(cal, replace(o, read_factor=f))[0]
                  for f in (o.read_factor, o.read_factor_slowest))
    return slow / fast


def row_band(cal: Calibration, o: Obs, conf: str) -> Band:
    """The range `cal` gives a measured row predicted at confidence `conf` (a `./main` prompt
    row: its backend's `./main` band where there is one, see `bands`)."""
    if o.kind == "decode":
        # the card's own level's band (a condition band lowers the label `conf`, not the base)
        k = speed.card_terms(o.card, o.backend, cal)
        p = k.params
        band = speed.decode_band(cal, p.decode_confidence, p.driver_measured, p.backend,
                                 o.card)
        if o.read_factor_slowest > o.read_factor:  # a SYCL row on an Intel GPU
            # the low end at the slowest unreordered kernels (speed.decode_figures' slow_read)
            band = Band(band.low_ratio * slowest_ratio(cal, o), band.high_ratio, band.n)
        return with_conditions(band, k.condition_bands, o)
    # the driver matters only where a band for unmeasured drivers was fitted; asked first, this
    # also keeps a calibration with no backends (the synthetic ones of the tests) from asking
    # card_params for a backend it does not have (novelty.driver_band ignores a missing band,
    # but card_params would still be called)
    driver = (DRIVER_OUT not in cal.prefill_bands
              or speed.card_params(o.card, o.backend, cal).driver_measured)
    if o.main_test and f"{conf}|main|{o.backend}" in cal.prefill_bands:
        return cal.prefill_bands[f"{conf}|main|{o.backend}"]
    band = speed.prefill_band(cal, conf, o.card, o.backend, o.is_moe, driver)
    if not any(key.startswith(CONDITION_OUT) for key in cal.prefill_bands):
        return band  # no condition band to widen by (nor card_params to ask, as above)
    return with_conditions(band, speed.card_terms(o.card, o.backend, cal).prefill_condition_bands,
                           o)


def with_conditions(band: Band, conditions: dict[str, Band], o: Obs) -> Band:
    """`band` joined with the band of each of row `o`'s conditions in `conditions` (a card's
    CardTerms.condition_bands or prefill_condition_bands: those its device was never measured
    in), as the engine widens (speed.condition_widened)."""
    for cond in speed.unmeasured_conditions(conditions, o.is_moe, _context(o)):
        band = union(band, conditions[cond])
    return band


def _devices(ratios: Sequence[tuple[str, float]]) -> int:
    """The devices behind a pool of (device, measured ÷ predicted)."""
    return len({d for d, _ in ratios})


def _band_of(ratios: Sequence[tuple[str, float]]) -> Band:
    """The range that holds BAND_COVERAGE of a new device's measured ÷ predicted, by the
    split-conformal rule counted in devices: each tail at (1 − BAND_COVERAGE) / 2, the level
    raised by (1 + 1/m) for the m devices behind the pool (at 80 %, nine devices or fewer give
    the pool's extremes), widened to contain 1. Devices, not rows: a device's rows share its
    offset, so a pool of 100 rows from 6 devices knows the spread of new devices about as well
    as 6 rows would."""
    m = _devices(ratios)
    hi_level = min(1.0, (1.0 + BAND_COVERAGE) / 2 * (1.0 + 1.0 / max(m, 1)))
    lo, hi = np.quantile([r for _, r in ratios], (1.0 - hi_level, hi_level))
    return Band(round(float(min(lo, 1.0)), 3), round(float(max(hi, 1.0)), 3), len(ratios))


# llama-bench's default tests (-p 512 -n 128, no depth): the runs of the other tables that the
# measured table holds beside the main table's and the scoreboard's.
DEFAULT_TESTS = ("tg128", "pp512")


def measured_table(obs: Sequence[Obs]) -> dict[str, tuple[MeasuredSpeed, ...]]:
    """Decode and prompt measurements from empty or short context, by card, model and quant:
    the main table's and the scoreboard's, and every other table's llama-bench default tests
    on an empty cache (DEFAULT_TESTS: the Strix Halo's, the GB10's, the B70's, ...)."""
    table: dict[str, list[MeasuredSpeed]] = defaultdict(list)
    for o in obs:
        if o.from_main_csv or o.scoreboard or (o.depth == 0 and o.test in DEFAULT_TESTS):
            table[measured_key(o.card.name, o.model, o.quant)].append(
                MeasuredSpeed(o.tokens_per_s, o.test, o.backend, o.source, o.kind)
            )
    return {
        k: tuple(sorted(v, key=lambda m: (m.kind, -m.tokens_per_s)))
        for k, v in sorted(table.items())
    }


def calibrate(obs: Sequence[Obs], with_bands: bool = True) -> Calibration:
    """The full calibration: parameters, bands, measured table."""
    cal = fit(obs)
    if with_bands:
        dec_b, pre_b = bands(obs)
        cal = replace(cal, decode_bands=dec_b, prefill_bands=pre_b)
    return replace(cal, measured=measured_table(obs),
                   measured_models=tuple(sorted({o.model for o in obs})),
                   measured_kinds=measured_kinds(obs),
                   decode_conditions=held_conditions(obs, "decode"),
                   prefill_conditions=held_conditions(obs, "prefill"),
                   notes=__doc__.split("\n\n")[1].strip())


def measured_kinds(obs: Sequence[Obs]) -> tuple[str, ...]:
    """The layer kinds (novelty.kind_of) of the models whose rows are fitted."""
    from tpscalc.catalog import NameNotFoundError, get_model

    kinds = set()
    for name in {o.model for o in obs}:
        try:
            kinds.add(kind_of(get_model(name).architecture))
        except NameNotFoundError:  # a synthetic row (the tests' models): no kind to give
            continue
    return tuple(sorted(k for k in kinds if k is not None))


def to_json(cal: Calibration) -> str:
    """Deterministic JSON text of a calibration (sorted keys, rounded numbers)."""
    d = asdict(cal)
    return json.dumps(d, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Fit on the measured CSVs and write calibration.json (or, with --check, compare)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="fail if the committed file differs")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    text = to_json(calibrate(load_observations()))
    if args.check:
        same = args.out.exists() and args.out.read_text(encoding="utf-8") == text
        print("calibration.json is up to date" if same else "calibration.json is stale")
        return 0 if same else 1
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
