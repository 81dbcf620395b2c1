"""The runtime seam: what an inference runtime stores for a model, and what it costs in memory.

The engine asks a `Runtime` for the formats a model is offered in, the bytes of its weights at
each, its KV cache, its buffers and the key of the speed calibration that applies. llama.cpp
(GGUF files) is the first implementation; vLLM (FP16, FP8, AWQ, GPTQ, paged KV) or MLX would
be another class with the same methods, not a change to the engine.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Protocol

from tpscalc.catalog import store
from tpscalc.catalog.quants import quantizations
from tpscalc.catalog.schema import Architecture, Card, Model
from tpscalc.estimate import memory as mem
from tpscalc.estimate import speed
from tpscalc.estimate.calibration import family_key
from tpscalc.estimate.vision import vision_bytes

# Models released quantized, by Hugging Face repository prefix, with the GGUF file type of the
# lab's (or ggml-org's) own conversion of those weights. The catalog build sets
# `Model.native_format` for the models after Epoch AI's last record from what they ship
# (Gemma QAT → Q4_0, FP8 → Q8_0, FP4 experts → MXFP4_MOE, ternary → TQ2_0); it comes first.
NATIVE_FORMATS: tuple[tuple[str, str], ...] = (
    # gpt-oss ships its experts in MXFP4 (https://huggingface.co/openai/gpt-oss-120b, "native
    # MXFP4 quantization"); ggml-org/gpt-oss-120b-GGUF keeps them MXFP4, the rest Q8_0/F32.
    ("openai/gpt-oss-", "MXFP4_MOE"),
)


# The "Q8_0" GGUF files of a model released with MXFP4 experts (ggml-org/gpt-oss-20b-GGUF,
# unsloth/gpt-oss-20b-GGUF: ~12 GB for 20b) keep the experts in MXFP4 and only the rest in
# Q8_0: that mix is llama.cpp's MXFP4_MOE file type, so a Q8_0 asked for is sized as it.
MXFP4_Q8_0 = "MXFP4_MOE"
# The one format of a model llama.cpp cannot convert (Model.runs_in_llama_cpp False): the
# 16-bit weights as released, for the memory they would need; no quantization is offered.
UNCONVERTED_FORMAT = "F16"


@dataclass(frozen=True)
class RuntimeLevel:
    """A runtime's speed as a share of llama.cpp's estimate for the same work on the same card:
    decode and prefill factors, the range (low, high: factors on the estimate) and the public
    rows it rests on (0: taken from a published comparison, not fitted here)."""

    decode: float
    prefill: float
    low: float
    high: float
    rows: int


class Runtime(Protocol):
    """What the engine needs to know about an inference runtime (all sizes in bytes)."""

    name: str  # as --runtime takes it
    label: str  # as people write it
    level: RuntimeLevel
    tensor_parallel: bool  # several GPUs split each layer (vLLM), not the layers (llama.cpp)
    # The format an answer starts from when no quantization or quality bound is asked: what the
    # runtime's users download by default (ollama's library tags, mlx-community); None: the
    # least compressed that fits. More compressed ones still come in when it does not fit.
    default_format: str | None

    def refusal(self, card: Card | None) -> str | None:
        """Why `card` (None: the CPU alone) cannot run this runtime; None when it can."""
        ...

    def context_default(self, rig_memory_gib: float, model_limit: int | None) -> int | None:
        """The context the runtime sets when none is asked, for GPUs of this much memory (GiB)
        and a model built for `model_limit` tokens (None: unknown); None: tpscalc's default."""
        ...

    def usable_gib(self, card: Card) -> float:
        """The memory the runtime lets itself allocate on `card`, GiB."""
        ...

    def speed_quant(self, fmt: str) -> str:
        """The GGUF type whose kernels do the same work as `fmt` (for the speed terms)."""
        ...

    def rank(self, fmt: str) -> str:
        """The ladder's GGUF type of the same quality as `fmt` (for the quality bounds)."""
        ...

    def formats(self, model: Model) -> tuple[str, ...]:
        """The weight formats offered for `model`, least compressed first."""
        ...

    def native_format(self, model: Model) -> str | None:
        """The format `model` ships in when it ships quantized (or a user's file holds), else None;
        the top of its ladder."""
        ...

    def weights_bytes(self, model: Model, fmt: str) -> tuple[float, float]:
        """(bytes stored, bytes read per generated token) of `model`'s weights in `fmt`."""
        ...

    def weights_bytes_many(self, model: Model, fmts: Sequence[str]) -> list[tuple[float, float]]:
        """`weights_bytes` of `model` in each of `fmts` (a ladder), in one call."""
        ...

    def kv_cache_bytes(self, arch: Architecture, context_tokens: int, kv_type: str) -> float:
        """The KV cache (and recurrent state) for `context_tokens` tokens."""
        ...

    def compute_buffer_bytes(self, arch: Architecture, context_tokens: int, n_ubatch: int = 512,
                             flash_attn: bool = True) -> float:
        """The scratch buffers of one forward pass of `n_ubatch` tokens at `context_tokens`."""
        ...

    def overhead_bytes(self, backend: str) -> float:
        """What the backend itself takes on the device (context, kernels)."""
        ...

    def vision_bytes(self, arch: Architecture) -> float:
        """A vision-language model's image encoder with its buffers (0 without one)."""
        ...

    def default_backend(self, card: Card) -> str:
        """The backend a card normally runs this runtime with."""
        ...

    def calibration_key(self, card: Card, backend: str) -> str:
        """The key of the speed calibration that applies to `card` on `backend`."""
        ...


WEIGHTS_MEMO_SIZE = 2048  # models whose sizes are kept; a card report asks ~1,000 models × ~13


@cache  # asked for every model of a card report
def _ladder_names() -> tuple[str, ...]:
    return tuple(q.name for q in quantizations())


class LlamaCpp:
    """llama.cpp with GGUF files: the quantization ladder, its KV cache and its buffers."""

    name = "llama.cpp"
    label = "llama.cpp"
    level = RuntimeLevel(1.0, 1.0, 1.0, 1.0, 0)  # the calibration is llama.cpp's own
    tensor_parallel = False
    default_format: str | None = None

    def refusal(self, card: Card | None) -> str | None:
        return None

    def context_default(self, rig_memory_gib: float, model_limit: int | None) -> int | None:
        return None

    def usable_gib(self, card: Card) -> float:
        return card.usable_memory_gib

    def speed_quant(self, fmt: str) -> str:
        return fmt

    def rank(self, fmt: str) -> str:
        return fmt

    def formats(self, model: Model) -> tuple[str, ...]:
        if model.file_weights is not None:  # a user's file comes in the one format it holds
            return (model.file_weights.format,)
        if not model.runs_in_llama_cpp:  # no GGUF of it exists: its 16-bit weights only
            return (UNCONVERTED_FORMAT,)
        ladder = _ladder_names()
        native = self.native_format(model)
        if native is None:
            return ladder
        # Below its native format, only the conversions that make the file smaller: re-quantizing
        # up (gpt-oss to Q8_0) would add bytes and no quality.
        size = self.weights_bytes(model, native)[0]
        return (native, *(q for q in ladder if self.weights_bytes(model, q)[0] < size))

    def native_format(self, model: Model) -> str | None:
        if model.file_weights is not None:
            return model.file_weights.format
        if model.native_format is not None:  # set by the catalog build (tools/recent_models.py)
            return model.native_format
        repo = (model.hf_repo or "").lower()
        return next((fmt for prefix, fmt in NATIVE_FORMATS if repo.startswith(prefix)), None)

    def __init__(self) -> None:
        # id(model) -> (model, {format: result}): the formulas take milliseconds for a model
        # outside the precomputed table (a native format such as MXFP4), and a report asks
        # for the same model on every card. The model is kept so an id is never reused.
        self._weights_memo: dict[int, tuple[Model, dict[str, tuple[float, float]]]] = {}

    def weights_bytes(self, model: Model, fmt: str) -> tuple[float, float]:
        return self.weights_bytes_many(model, (fmt,))[0]

    def weights_bytes_many(self, model: Model, fmts: Sequence[str]) -> list[tuple[float, float]]:
        if "Q8_0" in fmts and self.native_format(model) == "MXFP4_MOE":
            fmts = [MXFP4_Q8_0 if f == "Q8_0" else f for f in fmts]
        held = self._weights_memo.get(id(model))
        if held is None or held[0] is not model:
            if len(self._weights_memo) >= WEIGHTS_MEMO_SIZE:
                self._weights_memo.clear()
            # The precomputed table first (the build checks it against the formulas), then a
            # user's file's own sizes for its format, else the formulas (_weights_bytes). The
            # table's own row is shared until a size has to be added to it.
            known = store.model_weights_sizes(model.slug) or {}
            fw = model.file_weights
            if fw is not None:
                known = {**known, fw.format: (float(fw.bytes_stored), fw.bytes_read_per_token)}
            held = self._weights_memo[id(model)] = (model, known)
        sizes = held[1]
        try:
            return [sizes[fmt] for fmt in fmts]
        except KeyError:
            pass
        missing = [fmt for fmt in fmts if fmt not in sizes]
        sizes = {**sizes, **dict(zip(missing, self._weights_bytes(model, missing)))}
        self._weights_memo[id(model)] = (model, sizes)
        return [sizes[fmt] for fmt in fmts]

    def _weights_bytes(self, model: Model, fmts: Sequence[str]) -> list[tuple[float, float]]:
        """Sizes neither the table nor the user's file gives: from the formulas (their module,
        with the tensor inventories, loads here: a catalog model's sizes are in the table)."""
        from tpscalc.estimate.weights import (
            approx_weights_bytes,
            resident_weights_bytes,
            weights_read_per_token_bytes,
        )

        arch = model.architecture
        total_params, active_params = model.parameters_total, model.parameters_active
        out = []
        for fmt in fmts:
            if arch is None:
                total = approx_weights_bytes(total_params, fmt)
                out.append((total, total * active_params / total_params))
            else:
                out.append((float(resident_weights_bytes(arch, fmt)),
                            weights_read_per_token_bytes(arch, fmt)))
        return out

    def kv_cache_bytes(self, arch: Architecture, context_tokens: int, kv_type: str) -> float:
        return float(mem.kv_cache_bytes(arch, context_tokens, kv_type))

    def compute_buffer_bytes(self, arch: Architecture, context_tokens: int, n_ubatch: int = 512,
                             flash_attn: bool = True) -> float:
        return float(mem.compute_buffer_bytes(arch, context_tokens, n_ubatch, flash_attn))

    def overhead_bytes(self, backend: str) -> float:
        return float(mem.backend_overhead_bytes(backend))

    def vision_bytes(self, arch: Architecture) -> float:
        # llama.cpp loads the encoder from a separate mmproj file, with its own compute buffer.
        return float(vision_bytes(arch.vision))

    def default_backend(self, card: Card) -> str:
        return speed.default_backend(card)

    def calibration_key(self, card: Card, backend: str) -> str:
        return family_key(card, backend)


LLAMA_CPP = LlamaCpp()
