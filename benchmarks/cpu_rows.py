"""The CPU-only rows of the measured data, placed on the CPU table, and the fit of the CPU
model's shares (estimate/cpu_speed.py CPU_FIT) on them, judged leave-one-device-out.

Imported by benchmarks/rig_accuracy.py, which prints `report()`. Every row is llama.cpp on the
CPU alone (-ngl 0); where a row leaves the memory or the threads unstated the case says what
is assumed. Rows that cannot be placed are listed by `skipped()` with the reason.
"""
from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, replace
from pathlib import Path

from tpscalc.catalog import Cpu, Model, get_cpu, get_model
from tpscalc.estimate import cpu_speed, engine
from tpscalc.estimate.cpu_speed import CPU_FIT, RAM_EFFICIENCY, CpuFit
from tpscalc.estimate.memory import approx_architecture
from tpscalc.estimate.query import Query, Rig
from tpscalc.estimate.rig_stages import CPU_TOKEN_US
from tpscalc.estimate.types import UNQUANTIZED
from tpscalc.sources.hf_config import model_from_config

DATA = Path(__file__).resolve().parent / "data"


@dataclass(frozen=True)
class CpuCase:
    """One measured CPU-only row: decode (n = tokens generated) or prefill (n = prompt)."""

    device: str  # the CPU, for leave-one-device-out
    label: str
    rig: Rig
    model: str
    quant: str
    kind: str  # "decode" or "prefill"
    n: int
    measured: float  # tok/s
    kv_type: str = "f16"


def model_of(name: str) -> Model:
    """A catalog model; DeepSeek-V2-Lite (not in the catalog) from its transcribed config
    (benchmarks/data, from huggingface.co/deepseek-ai/DeepSeek-V2-Lite config.json)."""
    if name == "DeepSeek-V2-Lite":
        path = DATA / "DeepSeek-V2-Lite_config.json"
        return model_from_config(json.loads(path.read_text("utf-8")), path.name).model
    return get_model(name)


def _threads(cpu: Cpu, threads: int) -> Cpu:
    """`cpu` run on `threads` threads (a row that set -t below the P-cores)."""
    return cpu.model_copy(update={"p_cores": threads, "peak_fp32_gflops": round(
        threads * cpu.p_clock_ghz * cpu.p_fp32_flops_per_clock, 1)})


def _cpu_rig(cpu: str | Cpu, ram_gib: float, bandwidth: float | None = None) -> Rig:
    # No RAM headroom: each row ran, so its RAM held the model (the M3's 16 GB held LLaMA-7B
    # F16 streaming at RAM speed); these rows measure speed, not what an OS leaves free.
    return Rig((), ram_gib, bandwidth, cpu=get_cpu(cpu) if isinstance(cpu, str) else cpu,
               ram_headroom_gib=0.0)


def cpu_cases() -> list[CpuCase]:
    """Every CPU-only row that can be placed (all_sources_public.csv, localmaxxing_public.csv,
    llamacpp_extra_calibration.csv)."""
    m1max, m3 = _cpu_rig("Apple M1 Max", 32), _cpu_rig("Apple M3", 16)
    m3max = _cpu_rig("Apple M3 Max (16-core CPU)", 48)
    strix = _cpu_rig("Ryzen AI Max+ 395", 128)
    # Core Ultra 7 155H (llmfit bench, llama-bench -ngl 0, KV q8_0): memory not stated, assumed
    # the LPDDR5X-7467 the chip takes (119.5 GB/s; with DDR5-5600 it would be 89.6), 32 GiB
    u155h = _cpu_rig("Core Ultra 7 155H", 32)
    # Ryzen 7 5800X, 2x DDR4-2133 (34.1 GB/s), -t 4 (llama.cpp PR 12922, "CPU Only"); the row's
    # DeepSeek-Coder-V2-Lite has DeepSeek-V2-Lite's shape
    r5800 = _cpu_rig(_threads(get_cpu("Ryzen 7 5800X"), 4), 64, 34.1)
    x = "XiongjieDai/GPU-Benchmarks-on-LLM-Inference ./main, 2023"
    return [
        CpuCase("Ryzen AI Max+ 395", "Ryzen AI Max+ 395, Llama 2-7B Q4_0 tg128", strix,
                "Llama 2-7B", "Q4_0", "decode", 128, 28.94),
        CpuCase("Ryzen AI Max+ 395", "Ryzen AI Max+ 395, Llama 2-7B Q4_0 pp512", strix,
                "Llama 2-7B", "Q4_0", "prefill", 512, 294.64),
        *(CpuCase(dev, f"{dev}, {model} {quant} ({x})", rig, model, quant, kind, n, tps)
          for dev, rig, model, quant, kind, n, tps in (
              ("Apple M1 Max", m1max, "LLaMA-13B", "F16", "decode", 512, 4.44),
              ("Apple M1 Max", m1max, "Llama 2-13B", "F16", "decode", 512, 4.40),
              ("Apple M3", m3, "LLaMA-7B", "F16", "decode", 1024, 3.22),
              ("Apple M3", m3, "Llama 2-7B", "F16", "decode", 1024, 3.61),
              ("Apple M3 Max", m3max, "Llama 2-70B", "Q4_0", "decode", 1024, 3.11),
              # ./main's prompt: ~265-494 tokens; 400 taken
              ("Apple M1 Max", m1max, "LLaMA-13B", "F16", "prefill", 400, 24.45),
              ("Apple M1 Max", m1max, "Llama 2-13B", "F16", "prefill", 400, 26.29),
              ("Apple M3", m3, "LLaMA-7B", "F16", "prefill", 400, 29.31),
              ("Apple M3", m3, "Llama 2-7B", "F16", "prefill", 400, 25.21),
              ("Apple M3 Max", m3max, "Llama 2-70B", "Q4_0", "prefill", 400, 8.68))),
        *(CpuCase("Core Ultra 7 155H", f"Core Ultra 7 155H, {model} {quant} {kind}", u155h,
                  model, quant, kind, 128 if kind == "decode" else 256, tps, "q8_0")
          for model, quant, kind, tps in (
              ("Qwen3.5-4B", "Q4_K_M", "decode", 14.55),
              ("Qwen3.5-4B", "Q4_K_M", "prefill", 55.49),
              ("Qwen3.5-9B", "Q4_K_M", "decode", 8.45),
              ("Qwen3.5-9B", "Q4_K_M", "prefill", 29.15),
              # UD-Q3_K_M: unsloth's dynamic Q3_K_M, sized as Q3_K_M
              ("Qwen3.6-35B-A3B", "Q3_K_M", "decode", 13.36),
              ("Qwen3.6-35B-A3B", "Q3_K_M", "prefill", 35.79),
              # its per-layer embedding table is looked up, not streamed (1.1 of 2.6 GB read)
              ("gemma-4-E2B", "Q4_K_M", "decode", 27.61),
              ("gemma-4-E2B", "Q4_K_M", "prefill", 171.81))),
        CpuCase("Ryzen 7 5800X", "Ryzen 7 5800X -t 4, DeepSeek-V2-Lite Q6_K tg4096", r5800,
                "DeepSeek-V2-Lite", "Q6_K", "decode", 4096, 9.51, "q8_0"),
        CpuCase("Ryzen 7 5800X", "Ryzen 7 5800X -t 4, DeepSeek-V2-Lite Q6_K pp4096", r5800,
                "DeepSeek-V2-Lite", "Q6_K", "prefill", 4096, 62.50, "q8_0"),
    ]


def skipped() -> list[str]:
    """The CPU-only rows left out, and why."""
    return [
        ("2 rows Intel 13th-gen CPU (Jan's TensorRT-LLM blog, Mistral-7B): the CPU model is "
         "not stated"),
        "4 rows Ryzen 5 7640U (localmaxxing): vLLM through a remote endpoint, not llama.cpp",
        ("1 row gemma-4-E2B, Snapdragon 888 (llama-server, 30-token prompt): the CPU table "
         "has no phone chip"),
    ]


@dataclass(frozen=True)
class _Row:
    """A case reduced to what the fit varies: the work (decode: bytes the CPU reads per token;
    prefill: FLOPs of the prompt), the fixed seconds, and the CPU it runs on."""

    case: CpuCase
    work: float
    fixed_s: float
    bandwidth_gb_s: float
    is_float: bool
    is_moe: bool
    bound: str

    def seconds(self, fit: CpuFit) -> float:
        """Estimated seconds per token (decode) or for the prompt (prefill) under `fit`."""
        cpu = self.case.rig.cpu
        assert cpu is not None
        if self.case.kind == "prefill":
            return self.work / cpu_speed.prefill_flops(cpu, fit)
        rate, _ = cpu_speed.decode_rate_gb_s(cpu, self.bandwidth_gb_s, self.is_float,
                                             self.is_moe, fit)
        return self.fixed_s + self.work / (rate * 1e9)

    @property
    def measured_s(self) -> float:
        return (self.case.n if self.case.kind == "prefill" else 1) / self.case.measured


def _row(case: CpuCase) -> _Row | None:
    """`case` estimated with CPU_FIT and reduced to a _Row (None: it does not fit)."""
    model, cpu = model_of(case.model), case.rig.cpu
    assert cpu is not None
    arch = model.architecture or approx_architecture(model.parameters_total)
    n_gen = case.n if case.kind == "decode" else 128
    n_prompt = case.n if case.kind == "prefill" else 512
    e = engine.estimate(model, case.rig, Query(context=max(4096, n_gen + n_prompt),
                                                 n_gen=n_gen, n_prompt=n_prompt,
                                                 kv_type=case.kv_type), case.quant)
    if e.decode is None or e.prefill is None:
        return None
    bandwidth = case.rig.ram_bandwidth_gb_s or cpu.memory_bandwidth_gb_s
    is_float, is_moe = case.quant in UNQUANTIZED, arch.is_moe
    if case.kind == "prefill":
        work = e.prefill.time_to_first_token_s * cpu_speed.prefill_flops(cpu)
        return _Row(case, work, 0.0, bandwidth, is_float, is_moe, e.prefill.bound)
    fixed = CPU_TOKEN_US * 1e-6
    rate, _ = cpu_speed.decode_rate_gb_s(cpu, bandwidth, is_float, is_moe)
    work = (1 / e.decode.tokens_per_s - fixed) * rate * 1e9
    return _Row(case, work, fixed, bandwidth, is_float, is_moe, e.decode.bound)


def _implied(r: _Row, f: CpuFit) -> tuple[str, float]:
    """Which decode constant binds row `r` under `f`, and its value that makes the row exact
    (MoE rows: the MoE factor, given the rest of `f`)."""
    cpu = r.case.rig.cpu
    assert cpu is not None
    rates = cpu_speed.decode_rates_gb_s(cpu, r.bandwidth_gb_s, r.is_float, False, f)
    bound = min(rates, key=lambda k: rates[k])
    achieved = r.work / max(r.measured_s - r.fixed_s, 1e-9) / 1e9  # GB/s
    if r.is_moe:
        return "moe", rates[bound] / achieved
    if bound == "cpu_compute":
        core = f.core_gb_s_float if r.is_float else f.core_gb_s_quantized
        return ("float" if r.is_float else "quant"), core * achieved / rates[bound]
    # the fabric and RAM terms are not fitted: the share of each that makes the row exact
    return bound, achieved / rates[bound] * (RAM_EFFICIENCY if bound == "ram_bandwidth" else 1)


def _decode_fit(rows: list[_Row]) -> CpuFit:
    """The decode constants as the median, over the rows each one binds, of the value that makes
    the row exact; iterated until the binding terms settle. Dense rows set the per-core rates,
    MoE rows then the MoE factor (the RAM and fabric terms are not fitted)."""
    f = CPU_FIT
    for _ in range(20):
        implied: dict[str, list[float]] = {}
        for r in rows:
            key, value = _implied(r, f)
            implied.setdefault(key, []).append(value)
        m = {k: statistics.median(v) for k, v in implied.items()}
        new = replace(f, core_gb_s_quantized=m.get("quant", f.core_gb_s_quantized),
                      core_gb_s_float=m.get("float", f.core_gb_s_float),
                      moe_decode_factor=max(1.0, m.get("moe", f.moe_decode_factor)))
        if new == f:
            break
        f = new
    return f


def fit(rows: list[_Row]) -> CpuFit:
    """CpuFit from `rows`: the decode constants by `_decode_fit`, the prefill share as the
    median of each prefill row's implied share."""
    f = _decode_fit([r for r in rows if r.case.kind == "decode"])
    implied = [CPU_FIT.prefill_share * r.seconds(CPU_FIT) / r.measured_s for r in rows
               if r.case.kind == "prefill"]
    share = statistics.median(implied) if implied else CPU_FIT.prefill_share
    return CpuFit(round(f.core_gb_s_quantized, 2),
                  round(f.core_gb_s_float, 2), round(share, 3),
                  round(f.moe_decode_factor, 2))


def _error(row: _Row, f: CpuFit) -> float:
    return row.measured_s / row.seconds(f) - 1  # estimated tok/s / measured - 1


def _without_cpu(case: CpuCase) -> float | None:
    """`case`'s decode error with the CPU unnamed (the RAM, the CPU's, at RAM_EFFICIENCY and
    1 TFLOPS for a prompt: the estimate before the CPU table); None if it does not fit."""
    cpu = case.rig.cpu
    assert cpu is not None
    rig = replace(case.rig, cpu=None,
                  ram_bandwidth_gb_s=case.rig.ram_bandwidth_gb_s or cpu.memory_bandwidth_gb_s)
    n_gen = case.n if case.kind == "decode" else 128
    n_prompt = case.n if case.kind == "prefill" else 512
    e = engine.estimate(model_of(case.model), rig, Query(context=max(4096, n_gen + n_prompt),
                                                         n_gen=n_gen, n_prompt=n_prompt,
                                                         kv_type=case.kv_type), case.quant)
    speed = e.decode if case.kind == "decode" else e.prefill
    return None if speed is None else speed.tokens_per_s / case.measured - 1


def report() -> dict[str, float]:
    """Print every CPU row (estimate with CPU_FIT, the bound), the in-sample and
    leave-one-device-out medians, and the fitted shares; return the medians."""
    rows = []
    for case in cpu_cases():
        row = _row(case)
        if row is None:
            print(f"skip {case.label}: does not fit")
            continue
        rows.append(row)
    for reason in skipped():
        print(f"skip {reason}")
    fitted = fit(rows)
    print(f"\nCPU constants fitted on all {len(rows)} CPU rows: {fitted} (in use: {CPU_FIT})")
    out: dict[str, float] = {}
    for kind in ("decode", "prefill"):
        chosen = [r for r in rows if r.case.kind == kind]
        print(f"\nCPU only, {kind}: measured / estimated (in use) / leave-one-device-out")
        loo_errs, errs = [], []
        for r in chosen:
            others = fit([o for o in rows if o.case.device != r.case.device])
            err, loo = _error(r, CPU_FIT), _error(r, others)
            errs.append(abs(err))
            loo_errs.append(abs(loo))
            print(f"  {r.case.label[:66]:66} {r.case.measured:7.2f} "
                  f"{r.measured_s / r.seconds(CPU_FIT) * r.case.measured:7.2f} ({err:+.0%}, "
                  f"{r.bound}) LOO {loo:+.0%}")
        out[kind] = statistics.median(errs)
        out[kind + " rows"] = len(chosen)
        before = [abs(e) for r in chosen if (e := _without_cpu(r.case)) is not None]
        print(f"CPU only {kind} without the CPU named (RAM at {RAM_EFFICIENCY:.0%}, 1 TFLOPS): "
              f"median |error| {statistics.median(before):.0%} over the same rows")
        out[kind + " loo"] = statistics.median(loo_errs)
        print(f"CPU only {kind}: {len(chosen)} rows, {len({r.case.device for r in chosen})} "
              f"devices, median |error| {out[kind]:.1%} in sample, {out[kind + ' loo']:.1%} "
              f"leave-one-device-out")
    return out
