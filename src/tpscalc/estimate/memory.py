"""Memory a model needs on the card: weights + KV cache + runtime (compute buffers, backend).

All functions are pure; sizes are bytes unless the name says GiB (2^30 B). The KV-cache rules
follow llama.cpp's llama-kv-cache.cpp and were checked against the KV buffer sizes printed in
`data/measured/llamacpp_memory_logs.csv` (LLaMA 3.1 8B 16k ctx: 2048 MiB; DeepSeek V3 mainline
MLA 16k ctx before V-less caching: 2074 MiB; gemma3 4B 128k ctx with sliding window: 2734 MiB).
"""
from __future__ import annotations

from functools import cache

from tpscalc.catalog.schema import Architecture, Quantization
from tpscalc.catalog.store import ggml_block_sizes
from tpscalc.estimate.layers import attention_groups, compressed_kv_values
from tpscalc.estimate.types import MemoryBreakdown

GIB = 2**30
MIB = 2**20
# llama.cpp pads the sliding-window cache to a multiple of 256 cells and keeps one micro-batch
# beyond the window (size_swa = min(n_ctx, pad(n_swa + n_ubatch, 256)) in
# src/llama-kv-cache-iswa.cpp).
KV_PAD_CELLS = 256
# Fixed memory a backend takes on the GPU beyond llama.cpp's buffers (driver context, kernels,
# library handles): ollama reserves 457 MiB per CUDA or ROCm GPU and 512 MiB for Metal
# (cudaMinimumMemory, rocmMinimumMemory in ollama gpu/gpu.go; metalMinimumMemory in
# gpu/gpu_darwin.go, https://github.com/ollama/ollama). Vulkan and SYCL: no published figure,
# assumed equal to CUDA's. CPU: nothing on a GPU.
BACKEND_OVERHEAD_BYTES: dict[str, int] = {
    "cuda": 457 * MIB, "rocm": 457 * MIB, "metal": 512 * MIB,
    "vulkan": 457 * MIB, "sycl": 457 * MIB, "cpu": 0,
}
F32_BYTES = 4  # logits and activations in llama.cpp's compute graph are f32
# Vocabulary assumed when a model has no known architecture: LLaMA 3's 128,256 tokens,
# typical of 2024-25 open models (config.json of meta-llama/Meta-Llama-3-8B).
APPROX_VOCAB = 128_256


@cache  # asked three times per model in a report
def kv_bytes_per_element(kv_type: str = "f16") -> float:
    """Bytes per cached value: f16 2, q8_0 34/32, q4_0 18/32 (GGML_QUANT_SIZES block/bytes)."""
    block, size = ggml_block_sizes()[kv_type.upper()]
    return size / block


def _pad(n: int, to: int) -> int:
    return -(-n // to) * to


def kv_cache_bytes(arch: Architecture, context_tokens: int, kv_type: str = "f16",
                   n_ubatch: int = 512) -> int:
    """KV-cache bytes for one sequence of `context_tokens`.

    Each kind of attention layer (layers.attention_groups) with its own head shape:
    full-attention layers hold every token; sliding-window layers hold min(context, window +
    one micro-batch, padded to 256); KV-shared layers hold nothing (they read an earlier
    layer's); linear-attention / state-space layers hold a fixed recurrent state that does
    not grow with context (see `recurrent_state_bytes`). Mixture of experts changes nothing.
    Encoder-only models do not generate: no cache. An encoder-decoder caches its decoder's
    self-attention (num_layers counts the decoder blocks); llama.cpp recomputes the
    cross-attention K/V from the encoder output each step, which it keeps in host memory (see
    `encoder_output_bytes`). Compressed attention (DeepSeek-V4's `compress_ratios`) adds its
    compressed entries beyond the window (layers.compressed_kv_values).
    """
    if not arch.generates:
        return 0
    groups, recurrent = _kv_constants(arch, kv_type)
    compressed = compressed_kv_values(arch, context_tokens) * kv_bytes_per_element(kv_type)
    own = sum(cached * _cells(window, context_tokens, n_ubatch) * per_cell
              for cached, _, window, per_cell in groups)
    return round(own + compressed) + recurrent


def kv_borrowed_bytes(arch: Architecture, context_tokens: int, kv_type: str = "f16",
                      n_ubatch: int = 512) -> float:
    """KV bytes the KV-shared layers read per decoded token from the caches they borrow, B
    (0 without them). Each such layer streams the rows it attends to as its source layer
    did; a pass over another layer's rows does not stay on chip. A decoded token reads
    kv_cache_bytes plus this."""
    if not arch.generates or not arch.kv_shared_layers:
        return 0.0
    groups, _ = _kv_constants(arch, kv_type)
    return float(sum((attending - cached) * _cells(window, context_tokens, n_ubatch) * per_cell
                     for cached, attending, window, per_cell in groups))


def _cells(window: int | None, context_tokens: int, n_ubatch: int) -> int:
    """Cells one layer's cache holds at `context_tokens`: all of them, or a sliding window's
    (min(context, window + one micro-batch, padded to 256))."""
    if window is None:
        return context_tokens
    return min(context_tokens, _pad(window + n_ubatch, KV_PAD_CELLS))


# (id(arch), kv_type) -> (arch, per attention kind (layers with their own cache, layers that
# attend, window or None, bytes per cached token and layer), recurrent state bytes): what the
# KV cache of an architecture costs at any context, asked three times per model and report.
# The architecture is kept so that an id is never reused.
_Groups = tuple[tuple[int, int, int | None, float], ...]
_KV_MEMO: dict[tuple[int, str], tuple[Architecture, _Groups, int]] = {}
KV_MEMO_SIZE = 8192  # entries; emptied when full


def _kv_constants(arch: Architecture, kv_type: str) -> tuple[_Groups, int]:
    key = (id(arch), kv_type)
    held = _KV_MEMO.get(key)
    if held is not None and held[0] is arch:
        return held[1], held[2]
    if len(_KV_MEMO) >= KV_MEMO_SIZE:
        _KV_MEMO.clear()
    bpe = kv_bytes_per_element(kv_type)
    groups = tuple((g.cached_layers, g.layers, g.window, g.kv_values * bpe)
                   for g in attention_groups(arch))
    recurrent = recurrent_state_bytes(arch)
    _KV_MEMO[key] = (arch, groups, recurrent)
    return groups, recurrent


def _recurrent_layer_state_values(arch: Architecture, mixer: str) -> int:
    """Values of one layer's fixed recurrent state: the conv window plus the SSM/delta state."""
    conv = arch.linear_conv_kernel - 1
    if mixer in "MP" and arch.ssm_inner_size and arch.ssm_state_size:  # Mamba-2
        inner, state = arch.ssm_inner_size, arch.ssm_state_size
        return conv * (inner + 2 * arch.ssm_groups * state) + inner * state
    if mixer == "S" and arch.ssm_inner_size and arch.ssm_state_size:  # Mamba-1
        inner, state = arch.ssm_inner_size, arch.ssm_state_size
        return conv * inner + inner * state
    if mixer == "R":
        return _rwkv_state_values(arch)
    if mixer == "L":  # lightning attention: one head_dim × head_dim matrix per head
        return arch.num_attention_heads * arch.head_dim * arch.head_dim
    if arch.linear_num_value_heads and arch.linear_key_head_dim and arch.linear_value_head_dim:
        # Gated DeltaNet: one k_dim × v_dim matrix per value head, conv over q, k and v.
        k_heads = arch.linear_num_key_heads or arch.linear_num_value_heads
        v_heads = arch.linear_num_value_heads
        qkv = 2 * k_heads * arch.linear_key_head_dim + v_heads * arch.linear_value_head_dim
        return conv * qkv + v_heads * arch.linear_key_head_dim * arch.linear_value_head_dim
    return 0


def _rwkv_state_values(arch: Architecture) -> int:
    """One RWKV layer's state: RWKV-5/6 as llama.cpp keeps it (llama-hparams.cpp: n_embd_r =
    token_shift_count (2) × n_embd, n_embd_s = n_embd × wkv_head_size); RWKV-4: five n_embd
    vectors (att x, a, b, p and ffn x, as rwkv.cpp's state; https://github.com/RWKV/rwkv.cpp)."""
    h = arch.hidden_size
    if (arch.rwkv_version or 6) < 5:
        return 5 * h
    return 2 * h + h * (arch.rwkv_head_size or 64)


def recurrent_state_bytes(arch: Architecture) -> int:
    """Fixed per-sequence state of Mamba / linear-attention layers, bytes.

    The state does not grow with context.

    llama.cpp keeps it in f32 (llama_memory_recurrent: type_r = type_s = GGML_TYPE_F32,
    src/llama-memory-recurrent.cpp): conv state (d_conv − 1) × channels, plus the SSM state
    d_inner × d_state (Mamba) or one k_dim × v_dim matrix per head (Gated DeltaNet).
    """
    if not arch.linear_attention_layers:
        return 0
    mixers = arch.layer_mixers or ""
    if mixers:
        values = sum(_recurrent_layer_state_values(arch, m) for m in mixers if m in "MSPRLG")
    else:
        values = arch.linear_attention_layers * _recurrent_layer_state_values(arch, "-")
    return values * F32_BYTES


def encoder_output_bytes(arch: Architecture, input_tokens: int) -> int:
    """Encoder-decoder: the encoded input llama.cpp keeps for cross-attention, bytes (f32
    n_embd per input token, in host memory: llama_cross::v_embd in src/llama-graph.h); 0 else."""
    if arch.kind != "encoder-decoder":
        return 0
    return input_tokens * arch.hidden_size * F32_BYTES


def _ffn_width(arch: Architecture) -> int:
    """Width of the FFN activations per token (active experts only), gate and up counted."""
    if arch.is_moe:
        inter = arch.moe_intermediate_size or arch.intermediate_size or 4 * arch.hidden_size
        width = inter * ((arch.num_experts_active or 1) + arch.num_shared_experts)
    else:
        width = arch.intermediate_size or 4 * arch.hidden_size
    return width * (2 if arch.ffn_gated else 1)


def compute_buffer_bytes(arch: Architecture, context_tokens: int, n_ubatch: int = 512,
                         flash_attn: bool = True) -> int:
    """llama.cpp's GPU compute buffer for one micro-batch of `n_ubatch` tokens.

    ggml-alloc sizes the buffer to the high-water mark of the graph's live f32 tensors; two
    stages of the graph set it (every term is n_ubatch tokens × a width × 4 bytes):
    - the output: the logits (n_vocab wide), allocated above the last layer's FFN activations
      (the FFN width, gate and up counted), which are still live or leave holes too small for
      the logits;
    - the attention (`_attention_stage_bytes`): without flash attention llama.cpp materialises
      the scores KQ (context × heads wide) on top of the layer's inputs; with it the stage is
      small.
    Checked term by term against the mainline rows of llamacpp_memory_logs.csv
    (benchmarks/rig_accuracy.py, tests/estimate/test_memory.py): LLaMA 3.1 8B FA ub 1024:
    613 MiB (613 printed); Granite 8B no FA 32k ctx: 2140 MiB (2144); Pythia 2.8B no FA:
    157 MiB (162); GLM-Z1 32B FA: 386 MiB (353: that build split GLM's merged gate-up
    product into two copies, a different FFN region).
    """
    ub = max(1, min(n_ubatch, context_tokens))
    return max(_output_stage_bytes(arch, ub),
               _attention_stage_bytes(arch, context_tokens, ub, flash_attn))


def _output_stage_bytes(arch: Architecture, ub: int) -> int:
    """The logits over the last layer's FFN activations (see `compute_buffer_bytes`)."""
    # an encoder outputs embeddings (n_embd per token), not logits
    logits = (arch.vocab_size if arch.generates else arch.hidden_size) * ub * F32_BYTES
    return logits + ub * _ffn_width(arch) * F32_BYTES


def _attention_stage_bytes(arch: Architecture, context_tokens: int, ub: int,
                           flash_attn: bool) -> int:
    """Live tensors when a layer's attention runs (llm_graph_context::build_attn_mha):
    the residual stream and its norm (2 × n_embd), the Q, K and V projections
    ((heads + 2 KV heads) × head size), the mask copied to the GPU (context wide, f32, cast
    to f16 for flash attention) and, without flash attention, the scores KQ
    (context × heads, f32; the softmax runs in place)."""
    stream = 2 * arch.hidden_size * ub * F32_BYTES
    qkv = (arch.num_attention_heads + 2 * arch.num_kv_heads) * arch.head_dim * ub * F32_BYTES
    mask = context_tokens * ub * (2 if flash_attn else F32_BYTES)
    scores = 0 if flash_attn else context_tokens * ub * arch.num_attention_heads * F32_BYTES
    return stream + qkv + mask + scores


def offload_buffer_bytes(arch: Architecture, bytes_per_weight: float) -> float:
    """What a partial offload adds to the main GPU's compute buffer, bytes.

    With layers or experts in system RAM, llama.cpp runs a large batch's matrix products of
    those layers on the GPU anyway (ggml-backend's op offload), copying one CPU-resident weight
    at a time into the compute buffer. The buffer grows by about one weight matrix: for a
    mixture of experts one expert tensor of a layer (n_experts × hidden × expert FFN width:
    ffn_gate_exps, ffn_up_exps and ffn_down_exps are each that size), for a dense model one
    FFN projection (hidden × FFN width), at the quantization's bytes per weight.
    Fitted to nothing: compared with the ~30 rows of gguf-parser-go's compute-buffer sweep
    (tools/data/compute_buffer_sweep.csv) the catalog can map, it is within 27 % (median) of
    the measured partial − full difference (tests/estimate/test_offload_buffer.py).
    """
    if arch.is_moe and arch.num_experts:
        width = arch.moe_intermediate_size or arch.intermediate_size or 4 * arch.hidden_size
        weights = arch.num_experts * arch.expert_width * width
    else:
        weights = arch.hidden_size * (arch.intermediate_size or 4 * arch.hidden_size)
    return weights * bytes_per_weight


def offload_buffer_growth(arch: Architecture, context_tokens: int, n_ubatch: int,
                          flash_attn: bool, copied_bytes: float) -> float:
    """How much a partial offload grows the compute buffer, bytes: the weight copied to the GPU
    (`offload_buffer_bytes`) is live with the FFN activations, under the logits, so it raises
    the output stage; when the attention scores (no flash attention, long context) set the peak,
    the copy fits in their hole and costs only what exceeds them (Qwen3-30B-A3B, experts in
    RAM, 16k context, no FA: llamacpp_memory_logs.csv row 65 has no room for it on top)."""
    ub = max(1, min(n_ubatch, context_tokens))
    output = _output_stage_bytes(arch, ub)
    attention = _attention_stage_bytes(arch, context_tokens, ub, flash_attn)
    return max(output + copied_bytes, attention) - max(output, attention)


def backend_overhead_bytes(backend: str) -> int:
    """Fixed GPU memory the backend itself takes (driver context, kernels), bytes."""
    try:
        return BACKEND_OVERHEAD_BYTES[backend.lower()]
    except KeyError:
        known = ", ".join(BACKEND_OVERHEAD_BYTES)
        raise ValueError(f"unknown backend {backend!r}; known: {known}") from None


def runtime_bytes(arch: Architecture, backend: str, context_tokens: int, n_ubatch: int = 512,
                  flash_attn: bool = True) -> int:
    """Compute buffers plus the backend's fixed overhead, bytes."""
    return (compute_buffer_bytes(arch, context_tokens, n_ubatch, flash_attn)
            + backend_overhead_bytes(backend))


def approx_architecture(parameters: float) -> Architecture:
    """A LLaMA-like dense shape for a model known only by its parameter count (a heuristic).

    Assumes 128-wide heads, layers = hidden / 128 (LLaMA 7B/13B: 4096/32, 5120/40),
    grouped-query attention with a quarter of the heads for K/V (LLaMA 3 8B: 8 of 32), a gated
    FFN 3.5 × hidden wide, so that parameters ≈ 13 × layers × hidden²; LLaMA 3's vocabulary.
    It lands near LLaMA 3 8B's KV cache (132 vs 128 KiB per token) and errs high for large
    models (70B: 587 vs LLaMA 3 70B's 320 KiB): estimates from it are flagged approximated.
    """
    return _approx_shape(max(128, round((parameters * 128 / 13) ** (1 / 3) / 128) * 128))


@cache  # a card report asks for ~270 of them, of a few dozen widths
def _approx_shape(hidden: int) -> Architecture:
    heads = hidden // 128
    return Architecture(
        num_layers=max(1, hidden // 128), hidden_size=hidden,
        intermediate_size=int(3.5 * hidden), num_attention_heads=heads,
        num_kv_heads=max(1, heads // 4), head_dim=128, vocab_size=APPROX_VOCAB,
        source="approximated from the parameter count",
    )


def breakdown(weights_bytes: float, kv_bytes: float, buffers_bytes: float, vision_bytes: float,
              approximated: bool) -> MemoryBreakdown:
    """The one memory breakdown every estimate shows, GiB, from its parts in bytes: weights, KV
    cache (or recurrent state), compute buffers with the runtime's overhead, image encoder."""
    total = weights_bytes + kv_bytes + buffers_bytes + vision_bytes
    return MemoryBreakdown(weights_bytes / GIB, kv_bytes / GIB, buffers_bytes / GIB, total / GIB,
                           approximated, vision_bytes / GIB)


def memory_breakdown(arch: Architecture | None, parameters: float, ftype: str | Quantization,
                     context_tokens: int, kv_type: str = "f16", backend: str = "cuda",
                     n_ubatch: int = 512, flash_attn: bool = True) -> MemoryBreakdown:
    """Weights, KV cache, runtime and total, GiB; approximated when `arch` is None."""
    from tpscalc.estimate.weights import approx_weights_bytes, resident_weights_bytes

    approximated = arch is None or arch.approximated
    if arch is None:
        shape = approx_architecture(parameters)
        weights = approx_weights_bytes(parameters, ftype)
    else:
        shape = arch
        name = ftype if isinstance(ftype, str) else ftype.name
        weights = float(resident_weights_bytes(arch, name))
    kv = kv_cache_bytes(shape, context_tokens, kv_type, n_ubatch)
    runtime = runtime_bytes(shape, backend, context_tokens, n_ubatch, flash_attn)
    return breakdown(weights, kv, runtime, 0.0, approximated)
