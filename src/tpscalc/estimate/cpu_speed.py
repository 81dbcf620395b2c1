"""What a CPU streams and computes for llama.cpp's CPU backend, from the CPU table.

Decode on the CPU reads every weight once per token. The rate it reads them at is the least of
    the RAM's bandwidth, at RAM_EFFICIENCY (assumed)   (bound "ram_bandwidth")
    what the CPU complex can read (an AMD CCD's fabric link, an Apple CPU cluster; measured
    or derived in the CPU table)                       (bound "cpu_fabric")
and of what the cores stream: P-cores × a fitted per-core rate for the weight type, quantized
or F16/BF16/F32 (bound "cpu_compute"). One core streaming a matrix-vector product is held by
the cache misses it can keep in flight (Little's law: ~16 line-fill buffers × 64 B / ~100 ns of
DRAM latency is ~10 GB/s), and quantized blocks cost unpacking on top: a rate per core and
weight type, not the core's FLOPS (tried with the fabric share still fitted: a rate per
core per GHz gave 39 % leave-one-device-out, a share of the FP32 peak per weight 37 %, a rate
per core 25 %).
A mixture-of-experts model's bytes cost a fitted factor more time (its experts' slices are read
scattered, a few MiB each, and each expert's small product splits poorly over the threads), as
the GPU model's moe_decode_factor.
Prefill on the CPU is bounded by the same cores' FLOPS, at a fitted share.

The shares (`CPU_FIT`) are fitted by benchmarks/rig_accuracy.py on every CPU-only row it can
place (llama.cpp on Apple M1 Max, M3, M3 Max, Ryzen AI Max+ 395, Core Ultra 7 155H, Ryzen 7
5800X) and judged leave-one-device-out there.
"""
from __future__ import annotations

from dataclasses import dataclass

from tpscalc.catalog.schema import Cpu
from tpscalc.estimate.types import Bound

# Share of the RAM's spec bandwidth llama.cpp's CPU kernels stream weights at. STREAM-class
# reads on desktop DDR4/DDR5 reach 60-75 % of the spec figure (e.g. ~60-65 GB/s on dual-channel
# DDR5-6000, 96 GB/s spec); 0.65 is that range's middle, not fitted to the measured rows. The
# same with or without the CPU known: naming the CPU only adds limits.
RAM_EFFICIENCY = 0.65


@dataclass(frozen=True)
class CpuFit:
    """The fitted constants of the CPU model."""

    core_gb_s_quantized: float  # GB/s one P-core streams of quantized weights in decode
    core_gb_s_float: float  # the same for F16, BF16 and F32 weights
    prefill_share: float  # of the P-cores' FP32 peak a prompt's matrix products reach
    moe_decode_factor: float  # time multiplier on the bytes a mixture-of-experts model reads


# Fitted by benchmarks/rig_accuracy.py (each the median, over the CPU rows where its term binds,
# of the value that makes the row exact); leave-one-device-out error printed there.
CPU_FIT = CpuFit(core_gb_s_quantized=7.17, core_gb_s_float=13.32, prefill_share=0.753,
                 moe_decode_factor=1.46)


def decode_rates_gb_s(cpu: Cpu, ram_bandwidth_gb_s: float, is_float: bool, is_moe: bool = False,
                      fit: CpuFit = CPU_FIT) -> dict[Bound, float]:
    """Each limit on the weight bytes the CPU reads per second, GB/s, by the bound it names."""
    per_core = fit.core_gb_s_float if is_float else fit.core_gb_s_quantized
    rates: dict[Bound, float] = {
        "ram_bandwidth": RAM_EFFICIENCY * ram_bandwidth_gb_s,
        "cpu_compute": per_core * cpu.p_cores}
    if cpu.cpu_read_gb_s is not None:
        rates["cpu_fabric"] = cpu.cpu_read_gb_s
    moe = fit.moe_decode_factor if is_moe else 1.0
    return {bound: rate / moe for bound, rate in rates.items()}


def decode_rate_gb_s(cpu: Cpu, ram_bandwidth_gb_s: float, is_float: bool, is_moe: bool = False,
                     fit: CpuFit = CPU_FIT) -> tuple[float, Bound]:
    """The rate the CPU reads weights at during decode, GB/s, and the limit that sets it."""
    rates = decode_rates_gb_s(cpu, ram_bandwidth_gb_s, is_float, is_moe, fit)
    bound = min(rates, key=lambda k: rates[k])
    return rates[bound], bound


def prefill_flops(cpu: Cpu, fit: CpuFit = CPU_FIT) -> float:
    """FLOP/s the CPU's P-cores reach on a prompt's matrix products."""
    return fit.prefill_share * cpu.peak_fp32_gflops * 1e9
