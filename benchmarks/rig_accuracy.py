"""Error of the rig estimates (several GPUs, MoE experts in RAM, CPU only) on measured rows.

    python benchmarks/rig_accuracy.py

multi-GPU: every llama.cpp decode row of ../shared/data/measured/all_sources_public.csv run on
two or more identical cards whose card and model the catalog resolves (the layer split, -sm
layer, the default). MoE offload: the rows of llamacpp_extra_calibration.csv whose RAM is
stated, listed below with the RAM bandwidth read from their notes (spec figure: channels × 8 B
× transfer rate). None of these rows set a constant of the rig model (estimate/rig_engine.py):
its constants are stated assumptions, so this is an independent check. CPU only: every CPU-only
row that can be placed on the CPU table (benchmarks/cpu_rows.py), decode and prefill, which
fit the CPU model's shares (estimate/cpu_speed.py): in sample and leave-one-device-out.
"""
from __future__ import annotations

import csv
import statistics
import sys
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))  # cpu_rows, also when a test loads this file
sys.path.insert(0, str(ROOT / "tools"))  # calibration_data: the extra table's label maps

import cpu_rows  # benchmarks/cpu_rows.py: the CPU-only rows and the CPU model's fit
from calibration_data import extra_gpu_name, extra_model_name, normalise_quant

from tpscalc.catalog import get_card, get_cpu, get_model
from tpscalc.catalog.lookup import NameNotFoundError
from tpscalc.estimate import engine
from tpscalc.estimate.calibration_store import calibration
from tpscalc.estimate.query import EstimateInputError, Query, Rig
from tpscalc.estimate.rig_engine import RAM_EFFICIENCY
from tpscalc.estimate.rig_stages import HOP_US

MEASURED = ROOT / "data" / "measured"  # the repository's copy of ../shared/data/measured
MODELS = {"Llama-2-7B": "Llama 2-7B", "Llama-3-8B": "Llama 3-8B", "Llama-3-70B": "Llama 3-70B",
          "LLaMA-1-7B": "LLaMA-7B", "LLaMA-1-13B": "LLaMA-13B", "LLaMA-1-30B": "LLaMA-33B",
          "LLaMA-1-65B": "LLaMA-65B"}
DEVICES = {"NVIDIA A40": "A40 PCIe", "NVIDIA A100 80GB PCIe": "A100 PCIe 80 GB"}


@dataclass(frozen=True)
class Case:
    """One measured row: the rig, model, quant, generated tokens and the measured tok/s."""

    scenario: str
    label: str
    rig: Rig
    model: str
    quant: str
    n_gen: int
    measured: float
    layer_split: bool = True  # False: a 2023 multi-GPU run (see multi_gpu_cases)


def _card(name: str) -> object:
    return get_card(DEVICES.get(name, name.replace("NVIDIA ", "")))


def _tokens(test: str) -> int:
    """Generated tokens of a test label ("tg128", "tg1024_main")."""
    return int(test[2:].split()[0].split("_")[0])


def multi_gpu_cases() -> list[Case]:
    """Decode rows on two or more identical cards (all_sources_public.csv)."""
    out = []
    for r in csv.DictReader((MEASURED / "all_sources_public.csv").open(encoding="utf-8")):
        if ("llama.cpp" not in r["runtime"] or not r["test_kind"].startswith("decode")
                or r["n_gpus"] in ("", "1") or r["model"] not in MODELS
                or not r["test"].startswith("tg")):
            continue
        try:
            card = _card(r["gpu"])
        except NameNotFoundError:
            continue
        n = int(r["n_gpus"])
        # llama.cpp split a model's layers over GPUs (-sm layer, what tpscalc estimates) from
        # January 2024 (the ggml-backend scheduler); the December 2023 builds split every
        # matrix over all GPUs with a synchronisation per operation, a different cost.
        out.append(Case("multi-GPU", f"{n}x {r['gpu']} {r['model']} {r['quant']}",
                        Rig((card,) * n), MODELS[r["model"]], r["quant"],  # type: ignore[arg-type]
                        _tokens(r["test"]), float(r["tokens_per_s"]),
                        layer_split=r["date"] >= "2024"))
    return out


def extra_multi_gpu_cases() -> list[Case]:
    """Decode rows of llamacpp_extra_calibration.csv on two or more identical cards with
    llama.cpp's default layer split, all layers on the GPUs (their -ngl, given as run: a
    llama-bench run has no --fit margin), from an empty cache (2025-2026 builds: kyuz0's R9700,
    V100 and P100 toolboxes), labels mapped as the fit maps them (calibration_data's
    extra_gpu_name, extra_model_name)."""
    out = []
    for r in csv.DictReader((MEASURED / "llamacpp_extra_calibration.csv").open(encoding="utf-8")):
        n = int(r["n_gpus"]) if r["n_gpus"].isdigit() else 1
        gpu, model = extra_gpu_name(r["gpu"]), extra_model_name(r["model"])
        if (n < 2 or gpu is None or model is None or r["offload_notes"]
                or not r["split_mode"].startswith("layer")
                or not r["runtime"].startswith("llama.cpp")
                or not r["test"].startswith("tg") or "@" in r["test"]):
            continue
        quant = normalise_quant(r["quant"])
        ngl = int(r["ngl"]) if r["ngl"].isdigit() else None  # llama-bench's -ngl, as run
        out.append(Case("multi-GPU", f"{n}x {gpu} {model} {quant} (current build)",
                        Rig((get_card(gpu),) * n,  # type: ignore[arg-type]
                            n_gpu_layers=ngl), model, quant,
                        _tokens(r["test"]), float(r["tokens_per_s"])))
    return out


def _rig(cards: tuple[str, ...], ram_gib: float, bw: float, **kw: int) -> Rig:
    return Rig(tuple(get_card(c) for c in cards), ram_gib, bw, **kw)  # type: ignore[arg-type]


def _rtx2080(scenario: str, model: str, quant: str, measured: float,
             placement: dict[str, int]) -> Case:
    """A row of llmfit PRs 774/775: an RTX 2080 8 GB and an i9-10900X with quad-channel DDR4
    "~102 GB/s" (4 × DDR4-3200 is 102.4 GB/s), 62 GB RAM, llama-server at 4k context; with
    --n-cpu-moe every layer is on the GPU (-ngl 99 there, as run: the layers and the output)."""
    if "n_cpu_moe" in placement:
        placement = {**placement, "n_gpu_layers": 99}
    given = ", ".join(f"--{k.replace('_', '-')} {v}" for k, v in placement.items())
    return Case(scenario, f"RTX 2080 + 4ch DDR4, {model} {quant}, {given}",
                _rig(("GeForce RTX 2080",), 62, 102.4, **placement), model, quant, 128,
                measured)


def offload_cases() -> list[Case]:
    """The llamacpp_extra_calibration.csv rows with experts or layers in RAM and RAM stated."""
    return [
        # RTX A6000, -ot exps=CPU (all experts in RAM), -rtr 1; 8 channels DDR5-4800: 307.2 GB/s
        Case("MoE offload", "RTX A6000 + 8ch DDR5-4800, DeepSeek-R1 UD-Q2_K_XL, exps=CPU",
             _rig(("RTX A6000",), 256, 307.2, n_cpu_moe=61), "DeepSeek-R1", "Q2_K", 128, 13.68),
        # RTX 5090, experts in RAM; TR PRO 7975WX, 8 channels DDR5-5600: 358.4 GB/s
        Case("MoE offload", "RTX 5090 + 8ch DDR5-5600, DeepSeek-R1 UD-Q2_K_XL, exps=CPU",
             _rig(("RTX 5090",), 768, 358.4, n_cpu_moe=61), "DeepSeek-R1", "Q2_K", 128, 18.21),
        # 2x P100, routed experts of layers 32-93 (62 layers) in RAM; 4x DDR4-2400: 76.8 GB/s
        Case("MoE offload", "2x P100 + 4ch DDR4-2400, Qwen3-235B-A22B UD-Q2_K_XL, 62 exps=CPU",
             _rig(("Tesla P100 PCIe 16 GB",) * 2, 256, 76.8, n_cpu_moe=62),
             "Qwen3-235B-A22B", "Q2_K", 128, 7.17),
        *(_rtx2080(*row) for row in (
            ("MoE offload", "Qwen3-30B-A3B", "Q4_K_M", 36.7, {"n_cpu_moe": 36}),
            ("MoE offload", "gpt-oss-20b", "MXFP4", 36.4, {"n_cpu_moe": 12}),
            ("partial offload", "Mistral Small 3", "Q4_K_M", 5.2, {"n_gpu_layers": 16}),
            ("partial offload", "Gemma 3 12B", "Q4_K_M", 26.1, {"n_gpu_layers": 44}),
            ("partial offload", "Qwen3-14B", "Q4_K_M", 16.9, {"n_gpu_layers": 32}),
            ("partial offload", "Phi-4", "Q4_K_M", 16.7, {"n_gpu_layers": 32}))),
    ]


@dataclass(frozen=True)
class MemoryCase:
    """One load log of llamacpp_memory_logs.csv (mainline llama.cpp, a model the catalog
    holds): the rig and settings, and the MiB llama.cpp printed."""

    label: str
    model: str
    quant: str
    cards: tuple[str, ...]
    context: int
    n_ubatch: int
    flash_attn: bool
    kv_type: str
    n_cpu_moe: int | None
    logged: dict[str, float]  # gpu_weights, cpu_weights, kv, compute (MiB); absent: not printed


def memory_cases() -> list[MemoryCase]:
    """The logs whose model, quant, context, micro-batch, flash attention and KV type are all
    stated and whose placement tpscalc can express (all layers on the GPUs, or all experts in
    RAM with --n-cpu-moe); the row number of llamacpp_memory_logs.csv in each label."""
    return [
        MemoryCase("#10 Pythia 2.8B Q4_0, V100, 2k ctx, no FA", "Pythia-2.8b", "Q4_0",
                   ("Tesla V100 PCIe 16 GB",), 2048, 512, False, "f16", None,
                   {"gpu_weights": 1454.83, "cpu_weights": 69.08, "kv": 640.0, "compute": 162.0}),
        MemoryCase("#43 Llama 3.1 8B Q4_0, RTX 4080, 16k ctx, ub 1024, FA", "Llama 3.1-8B",
                   "Q4_0", ("GeForce RTX 4080",), 16384, 1024, True, "f16", None,
                   {"gpu_weights": 4155.99, "cpu_weights": 281.81, "kv": 2048.0,
                    "compute": 613.01}),
        MemoryCase("#90 GLM-Z1 32B 0414 IQ4_XS, RTX 3090 Ti, 32k ctx, FA", "GLM-4-32B-0414",
                   "IQ4_XS", ("GeForce RTX 3090 Ti",), 32768, 512, True, "f16", None,
                   {"gpu_weights": 16303.48, "cpu_weights": 471.75, "kv": 1952.0,
                    "compute": 353.0}),
        # #8: March 2024, before llama.cpp had flash attention; no compute buffer logged.
        MemoryCase("#8 Command R v01 Q4_K_S, RTX 4070 Ti + RTX 3090 Ti, 4k ctx, no FA",
                   "Command R", "Q4_K_S", ("GeForce RTX 4070 Ti", "GeForce RTX 3090 Ti"), 4096,
                   512, False, "f16", None,
                   {"gpu_weights": 19423.91, "cpu_weights": 1640.62, "kv": 5120.0}),
        MemoryCase("#65 Qwen3-30B-A3B Q4_K_M, RTX 4090 + RTX 5090, exps=CPU, 16k, no FA",
                   "Qwen3-30B-A3B", "Q4_K_M", ("GeForce RTX 4090", "GeForce RTX 5090"), 16384,
                   512, False, "f16", 48,
                   {"gpu_weights": 784.42, "cpu_weights": 17447.91, "kv": 1536.0,
                    "compute": 2160.0}),
    ]


def memory_rows() -> list[tuple[str, str, float, float]]:
    """(case, quantity, ours MiB, logged MiB) for every logged quantity of `memory_cases`:
    gpu_weights, cpu_weights, kv, compute (the compute buffers without the backend's own
    overhead, which the logs never print) and gpu_total (weights + KV + compute on the GPUs)."""
    from tpscalc.estimate import memory as mem

    out = []
    for case in memory_cases():
        model = get_model(case.model)
        arch = model.architecture
        assert arch is not None
        rig = Rig(tuple(get_card(c) for c in case.cards), 1024, 100,  # type: ignore[misc]
                  n_cpu_moe=case.n_cpu_moe,
                  n_gpu_layers=99 if case.n_cpu_moe else None)  # -ngl 99: all layers
        e = engine.estimate(model, rig, Query(context=case.context, kv_type=case.kv_type,
                                              n_ubatch=case.n_ubatch,
                                              flash_attn=case.flash_attn), case.quant)
        p = e.placement
        assert p is not None
        overhead = len(p.devices) * mem.backend_overhead_bytes(e.backend)
        ours = {"gpu_weights": sum(d.weights_bytes for d in p.devices),
                "cpu_weights": p.cpu_weights_bytes,
                "kv": sum(d.kv_bytes for d in p.devices) + p.cpu_kv_bytes,
                "compute": sum(d.buffer_bytes for d in p.devices) - overhead}
        # the GPUs' memory as llama.cpp allocates it (every layer's KV cache is on a GPU here)
        logged_gpu = dict(case.logged)
        if "compute" in case.logged:  # the total only where every part of it was logged
            logged_gpu["gpu_total"] = sum(case.logged[k] for k in ("gpu_weights", "kv", "compute"))
        ours["gpu_total"] = ours["gpu_weights"] + ours["kv"] + ours["compute"]
        out += [(case.label, key, ours[key] / 2**20, logged)
                for key, logged in logged_gpu.items()]
    return out


def memory_check() -> None:
    """Print our placement's weights, KV cache, compute buffers and GPU total (weights + KV +
    compute, the issue-9 target: within 5 %) against the logged MiB."""
    print("\nper-device memory against llama.cpp's load logs (MiB, ours / logged):")
    errs: dict[str, list[float]] = {}
    for label, key, mine, logged in memory_rows():
        err = mine / logged - 1
        errs.setdefault(key, []).append(abs(err))
        print(f"  {label[:62]:62} {key:12} {mine:8.0f} / {logged:8.0f} ({err:+.1%})")
    for key, values in errs.items():
        print(f"  {key:12} rows {len(values):2}  median |error| {statistics.median(values):5.1%}"
              f"  max {max(values):5.1%}")


def multi_device_fit(rows: list[tuple[str, bool, float, float, int, int]]) -> None:
    """The layer-split rows' cost beyond the devices' own shares, per layer, beside the
    calibration's no-CUDA-graph cost of old builds (era_terms["decode|cuda|0"]): those rows'
    builds turned CUDA graphs off for a split graph (rig_stages.HOP_US), so each layer's
    kernels were launched one by one. rows: (device, layer split, estimated s/token, measured
    s/token, layers, devices). Then the error of those rows replayed with that per-layer cost
    (the 2024 builds they ran), and as estimated for current builds."""
    split = [(dev, (meas - est) / layers) for dev, layer, est, meas, layers, _ in rows if layer]
    if not split:
        return
    era_us = calibration().era_terms.get("decode|cuda|0", 0.0)
    print(f"\nlayer-split rows ({len(split)}): cost beyond the devices' shares, median "
          f"{statistics.median(c for _, c in split) * 1e6:.0f} µs per layer; the calibration's "
          f"no-CUDA-graph cost of old single-GPU builds: {era_us:.0f} µs per layer; hop "
          f"{HOP_US:.0f} µs per device boundary (current builds)")
    for name, chosen in (("layer-split", [r for r in rows if r[1]]), ("all", rows)):
        replay = [abs(meas / (est + layers * era_us * 1e-6) - 1)
                  for _, _, est, meas, layers, _ in chosen]
        print(f"multi-GPU, {name} rows replayed with the no-graph cost: median |error| "
              f"{statistics.median(replay):.0%} over {len(replay)} rows")


def ram_efficiency_check(rows: list[tuple[str, float, float, float]]) -> None:
    """What the offload rows say about rig_engine.RAM_EFFICIENCY: each row's efficiency that
    would make its estimate exact, (bytes read from RAM / RAM bandwidth) / (measured time - the
    rest of the estimate). rows: (scenario: rig, RAM-read seconds at 100 %, other seconds,
    measured seconds). Printed, not fitted: a handful of rigs, and the dense and MoE rows of
    the same rig disagree (the MoE rows imply less), so one efficiency cannot be read off."""
    for kind in ("partial offload", "MoE offload"):
        each = [(rig, ram / (meas - rest)) for rig, ram, rest, meas in rows
                if rig.startswith(kind) and meas > rest]
        if each:
            print(f"\nRAM efficiency implied by the {len(each)} {kind} rows: median "
                  f"{statistics.median(e for _, e in each):.2f} (range "
                  f"{min(e for _, e in each):.2f}-{max(e for _, e in each):.2f}, "
                  f"{len({r for r, _ in each})} rigs; assumed {RAM_EFFICIENCY})", end="")
    print()


def _decode_query(n_gen: int) -> Query:
    """The test of a decode row: `n_gen` tokens after a 512-token prompt, in a context that
    holds them (at least the default 4,096)."""
    return Query(context=max(4096, n_gen + 512), n_gen=n_gen, n_prompt=512)


def range_check() -> None:
    """How often the measured decode falls inside the estimate's [low, high], and the median
    high / low, per scenario (the issue-11 standard for honest ranges: at least 80 % inside)."""
    found: dict[str, list[tuple[bool, float, str]]] = {}
    cases = [(c.scenario, c.layer_split, c.model, c.rig, c.quant, c.n_gen, c.measured)
             for c in multi_gpu_cases() + extra_multi_gpu_cases() + offload_cases()]
    cases += [("CPU only", False, c.model, c.rig, c.quant, c.n, c.measured)
              for c in cpu_rows.cpu_cases() if c.kind == "decode"]
    for scenario, layer_split, name, rig, quant, n_gen, measured in cases:
        try:
            e = engine.estimate(cpu_rows.model_of(name), rig,
                                _decode_query(n_gen), quant)
        except (NameNotFoundError, EstimateInputError):
            continue
        if e.decode is None:
            continue
        d = e.decode
        if scenario == "multi-GPU":  # the Dec-2023 rows split every matrix (before -sm layer)
            scenario += ", layer split" if layer_split else ", 2023 matrix split"
        found.setdefault(scenario, []).append(
            (d.low <= measured <= d.high, d.high / d.low, d.confidence))
    print("\ndecode ranges: measured inside [low, high], median high / low, confidences")
    for scenario, rows in found.items():
        inside = sum(r[0] for r in rows) / len(rows)
        levels = sorted({r[2] for r in rows})
        print(f"  {scenario:30} {len(rows):4} rows  inside {inside:4.0%}  high/low "
              f"{statistics.median(r[1] for r in rows):4.2f}  {', '.join(levels)}")


def _seconds(case: Case, rig: Rig) -> float | None:
    """The estimated decode time per token of `case` on `rig`, None if it does not fit."""
    e = engine.estimate(get_model(case.model), rig,
                        _decode_query(case.n_gen), case.quant)
    return None if e.decode is None else 1 / e.decode.tokens_per_s


# The CPUs the offload rows name (their notes): one socket of the two Xeons (numactl
# cpunodebind=0, 16 threads); the rows ran one thread per core.
OFFLOAD_CPUS = {"RTX A6000": "Threadripper PRO 7965WX", "RTX 5090": "Threadripper PRO 7975WX",
                "2x P100": "Xeon E5-2697A v4", "RTX 2080": "Core i9-10900X"}


def offload_with_cpu(cases: list[Case]) -> None:
    """The offload rows again with the CPU their notes name (`--cpu`): an independent check of
    the CPU model, whose constants come from the CPU-only rows alone."""
    print("\noffload rows with their CPU named (--cpu; the CPU model's constants are fitted on "
          "the CPU-only rows only):")
    errs: dict[str, list[float]] = {}
    for case in cases:
        name = next(v for k, v in OFFLOAD_CPUS.items() if case.label.startswith(k))
        rig = replace(case.rig, cpu=get_cpu(name))
        seconds = _seconds(case, rig)
        if seconds is None:
            continue
        err = 1 / seconds / case.measured - 1
        errs.setdefault(case.scenario, []).append(abs(err))
        print(f"  {case.label[:62]:62} {name:24} measured {case.measured:6.2f} estimated "
              f"{1 / seconds:6.2f} ({err:+.0%})")
    for scenario, values in errs.items():
        print(f"{scenario} with the CPU named: {len(values)} rows, median |error| "
              f"{statistics.median(values):.0%}")


def main() -> None:
    results: dict[str, list[float]] = {}
    multi: list[tuple[str, bool, float, float, int, int]] = []
    ram_rows: list[tuple[str, float, float, float]] = []
    for case in multi_gpu_cases() + extra_multi_gpu_cases() + offload_cases():
        try:
            e = engine.estimate(get_model(case.model), case.rig,
                                _decode_query(case.n_gen), case.quant)
        except (NameNotFoundError, EstimateInputError) as exc:
            print(f"skip {case.label}: {exc}")
            continue
        if e.decode is None:
            print(f"skip {case.label}: does not fit ({e.fit})")
            continue
        err = e.decode.tokens_per_s / case.measured - 1
        seconds = 1 / e.decode.tokens_per_s
        if case.scenario == "multi-GPU":
            multi.append((case.rig.devices[0].name, case.layer_split, seconds,
                          1 / case.measured, get_model(case.model).architecture.num_layers,
                          len(case.rig.devices)))
            if case.layer_split:
                results.setdefault("multi-GPU, layer split", []).append(abs(err))
        elif case.rig.ram_bandwidth_gb_s:  # the RAM term: re-estimate at twice the bandwidth
            faster = replace(case.rig, ram_bandwidth_gb_s=2 * case.rig.ram_bandwidth_gb_s)
            half = _seconds(case, faster)
            if half is not None:
                ram = 2 * (seconds - half)  # at RAM_EFFICIENCY
                ram_rows.append((f"{case.scenario}: {case.label.split(',')[0]}",
                                 ram * RAM_EFFICIENCY, seconds - ram, 1 / case.measured))
        results.setdefault(case.scenario, []).append(abs(err))
        print(f"{case.scenario:12} {case.label[:70]:70} measured {case.measured:7.2f} "
              f"estimated {e.decode.tokens_per_s:7.2f} ({err:+.0%}, {e.decode.bound})")
    offload_with_cpu(offload_cases())
    print()
    cpu = cpu_rows.report()
    print()
    print("scenario                 rows  median |error|  max |error|")
    for scenario in ("multi-GPU", "multi-GPU, layer split", "partial offload", "MoE offload"):
        errs = results.get(scenario, [])
        if not errs:
            print(f"{scenario:23}  {0:4}  (no rows with the RAM stated)")
            continue
        print(f"{scenario:23}  {len(errs):4}  {statistics.median(errs):13.0%}  "
              f"{max(errs):10.0%}")
    print(f"CPU only (decode)        {cpu['decode rows']:4.0f}  {cpu['decode']:13.0%}  "
          f"(in sample; {cpu['decode loo']:.0%} leave-one-device-out)")
    print(f"CPU only (prefill)       {cpu['prefill rows']:4.0f}  {cpu['prefill']:13.0%}  "
          f"(in sample; {cpu['prefill loo']:.0%} leave-one-device-out)")
    multi_device_fit(multi)
    ram_efficiency_check(ram_rows)
    range_check()
    memory_check()


if __name__ == "__main__":
    main()
