"""The runtimes people run besides llama.cpp, behind the `Runtime` seam (runtime.py).

Three run llama.cpp underneath with GGUF files and differ in their defaults, their speed level
and the command that realises an answer: ollama, LM Studio, llamafile. Three have their own
formats and memory rules: MLX (mlx-lm, Apple Silicon), vLLM and SGLang (safetensors, paged KV,
tensor parallel across cards). Each speed is llama.cpp's calibrated per-card estimate for the
same bytes and FLOPs, times the runtime's level, fitted on the public run logs
(benchmarks/runtime_accuracy.py prints the fit and its leave-one-device-out error).
Pure: no files, no network.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import ClassVar

from tpscalc.catalog.schema import Architecture, Card, Model
from tpscalc.estimate import memory as mem
from tpscalc.estimate.query import (
    DEFAULT_CONTEXT,
    MAX_CONTEXT,
    EstimateInputError,
    Query,
    Rig,
    model_context_limit,
)
from tpscalc.estimate.runtime import LLAMA_CPP, LlamaCpp, Runtime, RuntimeLevel
from tpscalc.estimate.types import Estimate
from tpscalc.estimate.vision import vision_bytes

GIB = 2**30
MIB = 2**20

# Fitted by benchmarks/runtime_accuracy.py on data/measured/localmaxxing_public.csv (llmfit's
# public benchmark cache and community results, AlexsJones/llmfit): the median of measured ÷
# llama.cpp's estimate for the same work over the decode rows whose model and device the
# catalog resolves, and the 10th and 90th percentiles of that ratio as the range. ollama: 54
# rows on 5 devices (leave-one-device-out median error 25 %); MLX: 30 rows on 2 Apple chips
# (10 %); vLLM: 8 rows, all on 2x RTX 3090 in tensor parallel (no device to leave out: thin).
# Their prompt rows are too few or too short (tens of tokens) to fit a prompt level: 1.0.
OLLAMA_LEVEL = RuntimeLevel(decode=0.98, prefill=1.0, low=0.22, high=1.30, rows=54)
MLX_LEVEL = RuntimeLevel(decode=1.27, prefill=1.0, low=1.17, high=1.48, rows=30)
VLLM_LEVEL = RuntimeLevel(decode=0.94, prefill=1.0, low=0.87, high=1.33, rows=8)
# LocalScore (llamafile's benchmark) runs at 0.72-0.79 of llama-bench's decode speed on the same
# cards (README "LocalScore": the level and ordering check); its midpoint and that range.
LLAMAFILE_LEVEL = RuntimeLevel(decode=0.755, prefill=0.755, low=0.72, high=0.79, rows=0)
# LM Studio runs llama.cpp's own engine (its "llama.cpp" runtime, a recent build): llama.cpp's
# level; no public rows name it, so its range is the llama.cpp one.
LMSTUDIO_LEVEL = RuntimeLevel(decode=1.0, prefill=1.0, low=1.0, high=1.0, rows=0)

# ollama's default context by the GPUs' memory: under 24 GiB 4k, 24-48 GiB 32k, 48 GiB and up
# 256k (https://github.com/ollama/ollama/blob/main/docs/context-length.mdx).
OLLAMA_CONTEXT_BY_VRAM = ((24.0, 4096), (48.0, 32768), (math.inf, 262144))

# MLX: mlx-lm quantizes every Linear and Embedding in groups of 64 weights, each group with an
# fp16 scale and an fp16 bias (mlx.core.quantize, mlx_lm.convert's default q_group_size=64):
# 32 extra bits per 64 weights, +0.5 bit per weight.
MLX_BITS = {"MLX-8bit": 8.5, "MLX-6bit": 6.5, "MLX-4bit": 4.5, "BF16": 16.0}
MLX_KV_STEP = 256  # mlx_lm.models.cache.KVCache grows its buffers 256 tokens at a time
MLX_PREFILL_STEP = 2048  # mlx_lm.generate's prefill_step_size: the prompt's chunk, tokens

# vLLM / SGLang formats as released on the Hub, bits per weight of the quantized linear layers
# (embeddings and the output head stay BF16 in FP8 and AWQ/GPTQ checkpoints):
# FP8 one scale per tensor or channel, ~8; AWQ/GPTQ INT4 group 128 with an fp16 scale and a
# 4-bit zero per group, 4 + 20/128; NVFP4 an FP8 scale per 16, 4 + 8/16; MXFP4 an E8M0 scale
# per 32, 4 + 8/32 (OCP MX spec).
SERVER_BITS = {"BF16": 16.0, "FP8": 8.0, "INT4": 4.0 + 20 / 128, "NVFP4": 4.5, "MXFP4": 4.25}
SERVER_FORMATS = ("BF16", "FP8", "INT4")
VLLM_GPU_MEMORY_UTILIZATION = 0.9  # vLLM's --gpu-memory-utilization default
SGLANG_MEM_FRACTION = 0.88  # SGLang's --mem-fraction-static default (server_args.py)
VLLM_BLOCK_TOKENS = 16  # vLLM's paged KV block size (--block-size default)
VLLM_BATCHED_TOKENS = 8192  # max_num_batched_tokens of `vllm serve` (V1), the profile run
VLLM_MAX_SEQS = 256  # max_num_seqs default: the sampler's profile holds 256 rows of logits
# CUDA graphs of the decode batch sizes: vLLM logs "Graph capturing finished ... took 0.5 GiB"
# for 7-8B models (assumed 0.5 GiB on every card, not fitted).
CUDA_GRAPH_BYTES = 512 * MIB
# One all-reduce of a token's activations (two a layer in tensor parallel): latency bound for
# a decode step; NVLink (SXM cards) ~10 µs, PCIe ~30 µs (assumed, from NCCL's small-message
# latencies; not fitted: the public rows hold too few tensor-parallel runs).
ALLREDUCE_US = {"nvlink": 10.0, "pcie": 30.0}
# Link bandwidth a prompt's all-reduces move at, GB/s per direction: NVLink 4 on H100 SXM
# 450 GB/s, PCIe 4.0 x16 ~25 GB/s achieved.
LINK_GB_S = {"nvlink": 450.0, "pcie": 25.0}


def _stored_ratio(model: Model, fmt: str) -> float:
    """Bytes read per generated token ÷ bytes stored in llama.cpp's `fmt` file: the share of
    the weights a token reads (the active experts, not the embedding table)."""
    stored, read = LLAMA_CPP.weights_bytes(model, fmt)
    return read / stored if stored else 1.0


def _unquantized_params(arch: Architecture) -> float:
    """Parameters of the token embedding and the output head (kept BF16 by vLLM's formats):
    vocabulary × width each, one table when they are tied."""
    return float(arch.vocab_size * arch.hidden_size * (1 if arch.tied_embeddings else 2))


class _GgufRuntime(LlamaCpp):
    """A runtime with llama.cpp underneath: its formats, files, memory; its own level."""

    level = LMSTUDIO_LEVEL
    label = "llama.cpp"

    def context_default(self, rig_memory_gib: float, model_limit: int | None) -> int | None:
        return None


class Ollama(_GgufRuntime):
    """ollama: llama.cpp's engine with its scheduler, its defaults and its Modelfile."""

    name = "ollama"
    label = "ollama"
    level = OLLAMA_LEVEL
    # a library model's default tag is its Q4_K_M file ("llama3.1:latest" = 8b-instruct-q4_K_M:
    # https://ollama.com/library/llama3.1/tags)
    default_format = "Q4_K_M"

    def context_default(self, rig_memory_gib: float, model_limit: int | None) -> int | None:
        return next(ctx for limit, ctx in OLLAMA_CONTEXT_BY_VRAM if rig_memory_gib < limit)


class LmStudio(_GgufRuntime):
    """LM Studio with its llama.cpp engine (`lms load`)."""

    name = "lmstudio"
    label = "LM Studio"
    level = LMSTUDIO_LEVEL


class Llamafile(_GgufRuntime):
    """llamafile (Mozilla's single-file llama.cpp, LocalScore's runtime)."""

    name = "llamafile"
    label = "llamafile"
    level = LLAMAFILE_LEVEL


class _OwnFormats:
    """A runtime with its own weight formats: sizes from bits per weight, speeds at the GGUF
    type of the same work (`speed_quant`), the ladder's rank (`rank`) of the same quality."""

    name = ""
    label = ""
    bits: ClassVar[dict[str, float]] = {}
    ranks: ClassVar[dict[str, str]] = {}  # format -> the GGUF type of like quality and work
    level = VLLM_LEVEL
    tensor_parallel = False
    vendors: tuple[str, ...] = ()
    default_format: str | None = None

    def native_format(self, model: Model) -> str | None:
        return None

    def weights_bytes(self, model: Model, fmt: str) -> tuple[float, float]:
        return self.weights_bytes_many(model, (fmt,))[0]

    def weights_bytes_many(self, model: Model, fmts: Sequence[str]) -> list[tuple[float, float]]:
        out = []
        for fmt in fmts:
            stored = self._stored_bytes(model, fmt)
            # the share of the weights a token reads, from llama.cpp's Q8_0 file (the weight
            # table holds it; its embedding table is as compressed as the rest, near enough)
            out.append((stored, stored * _stored_ratio(model, "Q8_0")))
        return out

    def _stored_bytes(self, model: Model, fmt: str) -> float:
        bits = self.bits.get(fmt)
        if bits is None:
            raise EstimateInputError(f"{self.label} has no format {fmt!r}; use one of "
                                     f"{', '.join(self.bits)}", "bad_quant")
        return float(model.parameters_total) * bits / 8

    def speed_quant(self, fmt: str) -> str:
        return self.ranks.get(fmt, "Q8_0")

    def rank(self, fmt: str) -> str:
        return self.ranks.get(fmt, "Q8_0")

    def vision_bytes(self, arch: Architecture) -> float:
        return float(vision_bytes(arch.vision))

    def default_backend(self, card: Card) -> str:
        return LLAMA_CPP.default_backend(card)

    def calibration_key(self, card: Card, backend: str) -> str:
        return LLAMA_CPP.calibration_key(card, backend)

    def context_default(self, rig_memory_gib: float, model_limit: int | None) -> int | None:
        return None

    def refusal(self, card: Card | None) -> str | None:
        if card is None:
            return f"{self.label} needs a GPU; give --gpu"
        if self._runs_on(card):
            return None
        return (f"{self.label} runs on {' or '.join(self.vendors)} GPUs, not on {card.name}; "
                "use --runtime llama.cpp")

    def _runs_on(self, card: Card) -> bool:
        return card.vendor in self.vendors


class Mlx(_OwnFormats):
    """mlx-lm on Apple Silicon: mlx-community's 4/6/8-bit files (group size 64)."""

    name = "mlx"
    label = "MLX"
    bits: ClassVar[dict[str, float]] = MLX_BITS
    ranks: ClassVar[dict[str, str]] = {"MLX-8bit": "Q8_0", "MLX-6bit": "Q6_K",
                                       "MLX-4bit": "Q4_K_M", "BF16": "BF16"}
    level = MLX_LEVEL
    vendors = ("Apple",)
    # `mlx_lm.convert -q` quantizes to 4 bits in groups of 64 unless told otherwise, and the
    # 4-bit conversions are mlx-community's most downloaded
    # (https://github.com/ml-explore/mlx-lm/blob/main/mlx_lm/LLMS.md, mlx_lm/utils.py)
    default_format: str | None = "MLX-4bit"

    def formats(self, model: Model) -> tuple[str, ...]:
        return ("MLX-8bit", "MLX-6bit", "MLX-4bit")

    def kv_cache_bytes(self, arch: Architecture, context_tokens: int, kv_type: str) -> float:
        steps = math.ceil(context_tokens / MLX_KV_STEP) * MLX_KV_STEP
        return float(mem.kv_cache_bytes(arch, steps, kv_type))

    def compute_buffer_bytes(self, arch: Architecture, context_tokens: int, n_ubatch: int = 512,
                             flash_attn: bool = True) -> float:
        # the prompt runs in chunks of prefill_step_size with MLX's fused attention: llama.cpp's
        # buffer formula at that chunk (an assumption: MLX frees its graph between steps)
        return float(mem.compute_buffer_bytes(arch, context_tokens, MLX_PREFILL_STEP, True))

    def overhead_bytes(self, backend: str) -> float:
        return float(mem.backend_overhead_bytes("metal"))

    def usable_gib(self, card: Card) -> float:
        # Metal's wired-memory limit: what macOS lets the GPU wire by default (the catalog's
        # gpu_memory_fraction; `sudo sysctl iogpu.wired_limit_mb` raises it)
        return card.usable_memory_gib


class _Server(_OwnFormats):
    """vLLM or SGLang: safetensors formats, paged KV, a memory fraction, tensor parallel."""

    bits: ClassVar[dict[str, float]] = SERVER_BITS
    ranks: ClassVar[dict[str, str]] = {"BF16": "BF16", "FP8": "Q8_0", "INT4": "Q4_K_M",
                                       "NVFP4": "Q4_K_M", "MXFP4": "Q4_K_M"}
    tensor_parallel = True
    vendors = ("NVIDIA", "AMD")
    memory_fraction = VLLM_GPU_MEMORY_UTILIZATION

    def formats(self, model: Model) -> tuple[str, ...]:
        repo = (model.hf_repo or "").lower()
        if repo.startswith("openai/gpt-oss-"):  # released with MXFP4 experts
            return ("MXFP4",)
        return SERVER_FORMATS

    def _stored_bytes(self, model: Model, fmt: str) -> float:
        total = super()._stored_bytes(model, fmt)
        arch = model.architecture
        if arch is None or fmt == "BF16":
            return total
        kept = min(_unquantized_params(arch), float(model.parameters_total))
        return total - kept * self.bits[fmt] / 8 + kept * 2.0

    def kv_cache_bytes(self, arch: Architecture, context_tokens: int, kv_type: str) -> float:
        blocks = math.ceil(context_tokens / VLLM_BLOCK_TOKENS) * VLLM_BLOCK_TOKENS
        return float(mem.kv_cache_bytes(arch, blocks, kv_type))

    def compute_buffer_bytes(self, arch: Architecture, context_tokens: int, n_ubatch: int = 512,
                             flash_attn: bool = True) -> float:
        """The profile run's peak activations (a batch of VLLM_BATCHED_TOKENS tokens through
        one layer's widest tensors, bf16) and the sampler's logits, plus the CUDA graphs."""
        ffn = arch.moe_intermediate_size or arch.intermediate_size or 4 * arch.hidden_size
        activations = VLLM_BATCHED_TOKENS * (4 * arch.hidden_size + 2 * ffn) * 2
        logits = VLLM_MAX_SEQS * arch.vocab_size * 4
        return float(activations + logits + CUDA_GRAPH_BYTES)

    def overhead_bytes(self, backend: str) -> float:
        return float(mem.backend_overhead_bytes(backend if backend != "metal" else "cuda"))

    def usable_gib(self, card: Card) -> float:
        return card.memory_gib * self.memory_fraction

    def context_default(self, rig_memory_gib: float, model_limit: int | None) -> int | None:
        # --max-model-len defaults to the model's own (max_position_embeddings)
        return model_limit

    def _runs_on(self, card: Card) -> bool:
        # NVIDIA's GB10 (unified) runs vLLM; AMD's integrated GPUs are not ROCm targets of it
        return card.vendor == "NVIDIA" or (card.vendor == "AMD" and not card.unified_memory)


class Vllm(_Server):
    """vLLM (`vllm serve`)."""

    name = "vllm"
    label = "vLLM"
    level = VLLM_LEVEL


class Sglang(_Server):
    """SGLang (`python -m sglang.launch_server`): vLLM's formats and kernels' level (one
    public row: too thin for a level of its own)."""

    name = "sglang"
    label = "SGLang"
    level = VLLM_LEVEL
    memory_fraction = SGLANG_MEM_FRACTION


RUNTIMES: dict[str, Runtime] = {
    r.name: r for r in (LLAMA_CPP, Ollama(), LmStudio(), Llamafile(), Mlx(), Vllm(), Sglang())
}


def get_runtime(name: str | None) -> Runtime:
    """The runtime called `name` (None: llama.cpp)."""
    return RUNTIMES[name or LLAMA_CPP.name]


def link_kind(card: Card) -> str:
    """How a tensor-parallel group of these cards talks: NVLink for SXM/OAM modules, else
    PCIe."""
    name = card.name.upper()
    return "nvlink" if "SXM" in name or "OAM" in name or "NVL" in name else "pcie"


OWN_FORMATS = frozenset(f for r in (Mlx, Vllm) for f in r.bits)


def own_format_name(rt: Runtime, name: str) -> str:
    """`name` as runtime `rt` spells its format ("mlx-4bit" -> "MLX-4bit"), or an
    EstimateInputError (bad_quant) listing its formats."""
    known: dict[str, float] = getattr(rt, "bits", {})
    found = next((f for f in known if f.lower() == name.strip().lower()), None)
    if found is None:
        raise EstimateInputError(f"{rt.label} has no format {name!r}; use one of "
                                 f"{', '.join(known)}", "bad_quant", list(known))
    return found


def for_runtime(model: Model, rig: Rig, query: Query, rt: Runtime,
                 runtime_context: bool = True) -> tuple[Rig, Query]:
    """The rig and query as runtime `rt` runs them: refused on a device it cannot run on (an
    EstimateInputError, `runtime_unsupported`), its default context when none was asked, and
    for a runtime of its own formats the GPUs alone (it offloads nothing to system RAM)."""
    for card in rig.devices or (None,):
        reason = rt.refusal(card)
        if reason is not None:
            raise EstimateInputError(reason, "runtime_unsupported")
    if not isinstance(rt, LlamaCpp):
        if len(rig.devices) > 1 and not rt.tensor_parallel:
            raise EstimateInputError(f"{rt.label} runs on one device; give one --gpu",
                                     "runtime_unsupported")
        rig = Rig(rig.devices, notes=rig.notes)
    limit = model_context_limit(model)
    default = rt.context_default(sum(c.memory_gib for c in rig.devices), limit)
    if default is not None and query.context == DEFAULT_CONTEXT and runtime_context:
        query = replace(query, context=min(default, limit or default, MAX_CONTEXT))
    return rig, query


def refused(model: Model, rig: Rig, query: Query, rt: Runtime, reason: str) -> Estimate:
    """The answer on a rig runtime `rt` cannot run: nothing fits, `reason` in refusal."""
    empty = mem.breakdown(0.0, 0.0, 0.0, 0.0, False)
    return Estimate(model.name, rig.name, None, query.context, "none", empty, 0.0, False, "no",
                    None, None, None, query.test, runtime=rt.name, refusal=reason)
