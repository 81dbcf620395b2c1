"""Card and model facts the speed model needs beyond bytes and bandwidth (pure functions).

- memory class (HBM, GDDR, unified LPDDR) and the device class the accuracy report groups by;
- an honest shader rate (RDNA 3 and later count dual issue in their FP32 figure, which
  llama.cpp's kernels rarely reach: https://chipsandcheese.com/p/microbenchmarking-amds-rdna-3-graphics-architecture);
- the dequantization class of a GGUF type (k-quants unpack 6-bit scales per 16-32 weights,
  legacy types one scale per 32, floats none: ggml-quants.c);
- attention work at a depth (sliding-window layers see at most their window), the
  per-expert batch of a mixture-of-experts prompt and the column tiles its expert GEMMs run in.
"""
from __future__ import annotations

import functools
import math
from typing import Literal

from tpscalc.catalog.schema import Architecture, Card
from tpscalc.estimate.layers import AttentionGroup, attention_groups
from tpscalc.estimate.memory import kv_borrowed_bytes
from tpscalc.estimate.types import UNQUANTIZED
from tpscalc.estimate.weights import FTYPE_DEFAULT_TYPE

MemoryClass = Literal["hbm", "gddr", "unified"]
DeviceClass = Literal["datacenter HBM", "consumer GDDR", "Apple", "iGPU / unified"]
DequantClass = Literal["float", "legacy", "k", "iq", "mxfp4"]
DEQUANT_CLASSES: tuple[DequantClass, ...] = ("float", "legacy", "k", "iq", "mxfp4")
# Architectures whose FP32 figure counts dual issue (two FP32 operations per lane and clock).
_DUAL_ISSUE = ("RDNA 3", "RDNA 4")


def memory_class(card: Card) -> MemoryClass:
    """HBM (datacenter stacks), unified (LPDDR shared with a CPU: Apple, GB10, APUs) or GDDR."""
    mtype = (card.memory_type or "").upper()
    if mtype.startswith("HBM"):
        return "hbm"
    if card.unified_memory or card.vendor == "Apple" or "LPDDR" in mtype or card.kind == "unified":
        return "unified"
    return "gddr"


def efficiency_class(card: Card) -> str:
    """Key of a card's memory-class offset on 1/η: "hbm", "unified", or "" (GDDR; Apple, whose
    unified memory is its backend's own calibration)."""
    cls = memory_class(card)
    if cls == "gddr" and card.kind in ("datacenter", "workstation"):
        return "gddr_pro"
    return "" if cls == "gddr" or card.vendor == "Apple" else cls


def device_class(card: Card) -> DeviceClass:
    """The class the accuracy report groups a device by."""
    if card.vendor == "Apple":
        return "Apple"
    cls = memory_class(card)
    if cls == "hbm":
        return "datacenter HBM"
    return "iGPU / unified" if cls == "unified" else "consumer GDDR"


def shader_tflops(card: Card) -> float | None:
    """FP32 shader rate a llama.cpp kernel can reach, TFLOPS (dual issue halved);
    None if unknown."""
    rate = card.tflops_fp32 or card.tflops_fp16_shader
    if rate is None:
        return None
    if (card.architecture or "").startswith(_DUAL_ISSUE):
        return rate / 2
    return rate


# NVIDIA architectures whose tensor cores take int8 (mma.sync m16n8k32, compute capability 7.5+):
# llama.cpp's quantized prompt kernels (ggml-cuda/mmq.cuh) run there as int8 tensor-core GEMMs,
# whose dense rate is twice the full FP16 rate on each of them (Turing, Ampere, Ada, Hopper and
# Blackwell whitepapers: e.g. A100 624 INT8 TOPS vs 312 FP16; RTX 4090 660.6 vs 330.3).
_INT8_MMA = ("Turing", "Ampere", "Ada Lovelace", "Hopper", "Blackwell")
# Architectures whose GeForce parts run FP16 with FP32 accumulation at half rate; the catalog's
# tensor figure for a "GeForce ..." card is that halved rate (tools/data/tensor_rates.csv,
# geforce_flops_per_clock), while their FP16-accumulate and INT8 rates are not cut.
_GEFORCE_HALVED = ("Turing", "Ampere", "Ada Lovelace", "Blackwell 2.0")
# Pascal chips with DP4A (compute capability 6.1): four int8 multiply-adds per lane and clock,
# i.e. 4 × the FP32 FMA rate in operations. GP100 (6.0, fast FP16) has none.
DP4A_PER_FP32 = 4.0


def prompt_matrix_tflops(card: Card, quantized: bool, int8_mmq: bool = True,
                         backend: str = "cuda", bf16: bool = False,
                         build_date: str | None = None) -> float | None:
    """Peak rate of the matrix work of a prompt under llama.cpp, T(FL)OPS; None if unknown.

    NVIDIA: quantized weights go through MMQ: int8 tensor cores on Turing and later (2 × the
    full FP16 tensor rate), DP4A on Pascal 6.1; Volta (FP16-only tensor cores) and GP100 (no
    DP4A) dequantize to FP16 for cuBLAS. GTX 16xx (TU11x, compute capability 7.5 but no tensor
    cores) gets MMQ's Turing int8-mma path by its compute capability, with no matrix units to
    run it on: the FP32 shader rate. F16 weights run cuBLAS at the full FP16 tensor rate.
    Other vendors: the catalog's dense matrix (FP16) rate. `backend="vulkan"` (and the
    backends that borrow its parameters): vulkan_matrix_tflops. The FP32 shader work beside
    it is speed.combined_tflops's. `int8_mmq=False`: builds before llama.cpp made MMQ the
    default on tensor-core cards (PR #8075, June 2024), which dequantized to FP16 for cuBLAS
    there. `bf16`: the weights are BF16 (vulkan_matrix_tflops; elsewhere as F16).
    `build_date`: the build's (xe2_coopmat; None: a current build).
    """
    if backend == "vulkan":
        return vulkan_matrix_tflops(card, bf16=bf16 and not quantized, quantized=quantized,
                                    build_date=build_date)
    tensor = card.tflops_fp16_dense or card.tflops_fp16_shader or card.tflops_fp32
    if card.vendor != "NVIDIA" or tensor is None:
        return tensor
    arch = card.architecture or ""
    has_tensor = card.tflops_fp16_derived  # derived from a tensor-core rate (card_rules.py)
    tensor = fp16_accumulate_tflops(card) or tensor
    if not quantized:
        return tensor
    if has_tensor and arch.startswith(_INT8_MMA):
        return 2.0 * tensor if int8_mmq else tensor
    fp32 = card.tflops_fp32
    fast_fp16 = (card.tflops_fp16_shader or 0.0) >= (fp32 or math.inf)
    if not has_tensor and fp32 and arch == "Turing":
        return fp32
    if not has_tensor and fp32 and arch == "Pascal" and not fast_fp16:
        return DP4A_PER_FP32 * fp32
    return tensor


def fp16_accumulate_tflops(card: Card) -> float | None:
    """An NVIDIA card's dense FP16 tensor rate with FP16 accumulation, TFLOPS: the catalog's
    figure, doubled on the GeForce parts whose FP32-accumulate rate it is (_GEFORCE_HALVED);
    None without tensor cores."""
    if card.vendor != "NVIDIA" or not (card.tflops_fp16_derived and card.tflops_fp16_dense):
        return None
    halved = card.name.startswith("GeForce") and (card.architecture or "").startswith(
        _GEFORCE_HALVED)
    return card.tflops_fp16_dense * (2.0 if halved else 1.0)


# Architectures whose matrix units take BF16 (NVIDIA tensor cores from Ampere on; Ampere GA100
# whitepaper), on which a Vulkan driver can offer BF16 cooperative matrices.
_BF16_TENSOR = ("Ampere", "Ada Lovelace", "Hopper", "Blackwell")


# Intel architectures whose XMX engines ggml-vulkan runs through cooperative matrices (llama.cpp
# PR #14001, June 2025: Xe2; `ggml_vk_khr_cooperative_matrix_support`), and the date from which
# its builds carry the Xe2/Xe3 warp tiles of PR #18178 ("vulkan: Warptile tuning for Intel
# Xe2/Xe3", opened 2025-12-18, in builds from January 2026): 4x the workgroup size, 2x BM and BN.
_XE2_COOPMAT_ARCHITECTURES = ("Xe2", "Xe3")
XE2_COOPMAT_TILES_SINCE = "2026-01"
# The build date of an undated row: older than every dated rule (xe2_coopmat, matrix_attention).
UNDATED_BUILD = ""


def xe2_coopmat(card: Card, backend: str, build_date: str | None = None,
                bf16: bool = False) -> bool:
    """True where llama.cpp's Vulkan prompt GEMMs run on an Intel Xe2 (or later) card's XMX
    engines with the tuned tiles of PR #18178: builds from XE2_COOPMAT_TILES_SINCE on
    (`build_date` ISO, maybe only year-month; None: a current build; "" an undated one, taken as
    older). Not for BF16 weights, whose GEMM runs on the shader ALUs where the driver offers
    no BF16 cooperative matrices (vulkan_matrix_tflops). Their efficiency on the XMX peak is a
    fitted factor of its own
    (calibration.BackendParams.prefill_xe2_coopmat_factor): the Arc Pro B70 (Mesa 26) and B60
    (Mesa 26.0.3) reach a small share of it (the B70 17 % on Llama 3.1 8B)."""
    return (backend == "vulkan" and not bf16 and card.vendor == "Intel"
            and (card.architecture or "").startswith(_XE2_COOPMAT_ARCHITECTURES)
            and (build_date is None or build_date >= XE2_COOPMAT_TILES_SINCE))


def vulkan_matrix_tflops(card: Card, bf16: bool = False, quantized: bool = True,
                         build_date: str | None = None) -> float | None:
    """Peak rate of llama.cpp's Vulkan prompt GEMMs on the card, TFLOPS; None if unknown.

    Its matrix shaders use cooperative matrices where the driver offers them on matrix units:
    NVIDIA's tensor cores from Turing on and AMD's WMMA (the catalog's dense FP16 rate). At the
    default precision ggml-vulkan picks its FP16-accumulating pipelines
    (`ggml_vk_get_mul_mat_mat_pipeline`: `f16acc` under coopmat2 always, under coopmat1 where
    the driver offers FP16-accumulating cooperative matrices, as NVIDIA's does), so a GeForce
    card runs at its full FP16-accumulate rate (fp16_accumulate_tflops), not the halved
    FP32-accumulate figure the catalog holds: an RTX 3090 reaches 76 TFLOPS on Llama 3.1 8B
    Q4_0 (2026 rows), above its 71 TFLOPS FP32-accumulate peak. Elsewhere they run on the
    shader ALUs at the FP32 rate: NVIDIA without tensor cores (Pascal, GTX 16xx; Pascal's FP16
    runs at 1/64) and Intel Arc: the measured Arc A750,
    A770M and B580 reach 61-84 % of their FP32 rate, 8-10 % of their XMX peak. ggml-vulkan
    leaves Alchemist's XMX engines idle and has run Xe2's since llama.cpp PR #14001 (June
    2025), where the builds before the tile tuning of PR #18178 reached no more than the FP32
    rate (a B580 at 0.62 of it); from that tuning on (xe2_coopmat, `build_date`) an Xe2 card
    is rated at its XMX peak (the catalog's dense FP16 rate), at an efficiency of its own:
    the Arc Pro B70 reaches 1.4x its FP32 rate on Llama 3.1 8B, and the B60's MoE prompts
    (gpt-oss-20b, qwen35moe 35B-A3B) ran 2.4-2.5x faster than the FP32 rule had them.

    `bf16`: BF16 weights. ggml-vulkan builds its BF16 GEMM on cooperative matrices only where
    the device offers BF16 ones (`coopmat_bf16_support`, VK_KHR_shader_bfloat16; ggml-vulkan.cpp
    `pipeline_matmul_bf16`), else its scalar shader converts BF16 to FP32 on the shader ALUs:
    the honest shader rate (shader_tflops) except on NVIDIA tensor cores that take BF16. The
    Strix Halo's BF16 prompts on RADV run at that rate (dense 8 of its 14.9 TFLOPS; on ROCm,
    whose rocBLAS/hipBLASLt GEMMs use WMMA, 3× faster).

    AMD chips without matrix units (GCN, RDNA 1 and 2: no WMMA) run the same float shaders at
    the FP32 rate where the weights are not quantized, or are quantized on a chip without an
    accelerated int8 dot product (has_int8_dot: GCN up to 5.0, Navi 10), for which ggml-vulkan
    builds no int8 (mul_mmq) shaders: their packed-FP16 figure is not what those shaders reach.
    The Radeon RX 5700 XT (Navi 10) reaches 0.64 of its FP32 rate on Llama 2 7B Q4_0 (PR #13324's
    rows), as the GTX 1070 (0.66) and the Arc A750 (0.84) do on their shader paths, where its
    packed-FP16 figure gave 0.32. Quantized weights on an RDNA 2 chip (int8 dot, mul_mmq) keep the
    packed-FP16 figure: no row measures that path.
    """
    arch = card.architecture or ""
    if bf16 and not (card.vendor == "NVIDIA" and card.tflops_fp16_derived
                     and arch.startswith(_BF16_TENSOR)):
        return shader_tflops(card)
    if xe2_coopmat(card, "vulkan", build_date) and card.tflops_fp16_dense:
        return card.tflops_fp16_dense
    if card.vendor in ("NVIDIA", "Intel"):
        full = fp16_accumulate_tflops(card)
        if full is not None:  # BF16 accumulates in FP32: the catalog's (halved) figure
            return card.tflops_fp16_dense if bf16 else full
        return card.tflops_fp32 or card.tflops_fp16_shader
    if (card.vendor == "AMD" and not card.tflops_fp16_derived
            and not (quantized and has_int8_dot(card, "vulkan"))):
        return shader_tflops(card)  # the float shaders on the shader ALUs (no WMMA)
    return card.tflops_fp16_dense or card.tflops_fp16_shader or card.tflops_fp32


# Backends whose flash-attention kernels run on matrix units (CUDA: mma.sync FP16 kernels on
# Turing and later, wmma on Volta; Metal: simdgroup matrices). ROCm on RDNA runs some heads on
# WMMA (matrix_attention), others, and Vulkan without cooperative matrices all, in its
# tile and vector kernels on the shader ALUs.
_MATRIX_ATTENTION_BACKENDS = ("cuda", "metal")


# ROCm's prompt flash attention on RDNA's WMMA units: ggml-cuda/fattn.cu
# (ggml_cuda_get_best_fattn_kernel: "AMD WMMA is always faster than the tile kernel if the full
# tile width of 16 can be utilized") picks its MMA kernel for heads of at most 128 dimensions
# (not 40 or 72) whose query heads share K/V heads two or more to one (gqa_opt_applies), else
# the tile kernel on the shader ALUs (MHA, 256-wide heads, MLA). RDNA 4 has had it since
# January 2026 (PR #18481; PR #19063 of 2026-01-24 calls that path RDNA4-only), RDNA 3 and 3.5
# since mid-May 2026: the Strix Halo's kyuz0/amd-strix-halo-toolboxes logs of build 9112
# (2026-05-12) and 9187 (2026-05-18) differ by 2.0-2.3x at pp2048 @ d32768 for gpt-oss-20b,
# gpt-oss-120b and MiniMax-M2.7 (64- and 128-wide GQA heads) and by 0-8 % for Llama 2 7B (MHA),
# gemma-4 (256/512) and GLM-4.7-Flash (MLA). The build date from which a row ran it, per
# architecture:
_ROCM_WMMA_ATTENTION_SINCE = {"RDNA 4.0": "2026-01-13", "RDNA 3.0": "2026-05-14",
                              "RDNA 3.5": "2026-05-14"}
WMMA_ATTENTION_MAX_HEAD_DIM = 128
_WMMA_ATTENTION_OTHER_HEAD_DIMS = (40, 72)  # head sizes the MMA kernel leaves to the tile one


def wmma_attention_shape(arch: Architecture) -> bool:
    """True for an attention whose every head is at most WMMA_ATTENTION_MAX_HEAD_DIM wide
    (not 40 or 72) with two or more query heads per K/V head (fattn.cu's gqa_opt_applies),
    and no latent (MLA) cache."""
    if arch.kv_lora_rank is not None:
        return False
    heads = [(arch.head_dim, arch.num_attention_heads, arch.num_kv_heads)]
    if arch.global_head_dim is not None:
        heads.append((arch.global_head_dim, arch.num_attention_heads,
                      arch.global_num_kv_heads or arch.num_kv_heads))
    return all(d <= WMMA_ATTENTION_MAX_HEAD_DIM and d not in _WMMA_ATTENTION_OTHER_HEAD_DIMS
               and q // kv >= 2 for d, q, kv in heads)


def matrix_attention(card: Card, backend: str, wmma_shape: bool, flash_attn: bool = True,
                     build_date: str | None = None) -> bool:
    """True where a prompt's attention runs on the card's matrix units under the backend:
    always on CUDA and Metal; on Vulkan on Intel Xe2's XMX engines in builds with PR #18178's
    tiles (xe2_coopmat: ggml-vulkan's flash attention takes its coopmat1 path where the device
    has cooperative matrices and full subgroups, `coopmat1_fa_support`; without flash attention
    Q·Kᵀ and P·V are its coopmat GEMMs); on ROCm without flash attention (Q·Kᵀ and P·V are batched
    hipBLAS GEMMs) and, with it, for a wmma_attention_shape model on RDNA from the build date
    on (_ROCM_WMMA_ATTENTION_SINCE; `build_date` ISO, maybe only year-month; None: a current
    build; "" an undated one, taken as older)."""
    if backend in _MATRIX_ATTENTION_BACKENDS:
        return True
    if backend == "vulkan":  # Xe2's XMX engines: ggml-vulkan's coopmat1 flash attention, or
        return xe2_coopmat(card, backend, build_date)  # without it the tuned mul_mm GEMMs
    if backend != "rocm":
        return False
    if not flash_attn:
        return True
    since = _ROCM_WMMA_ATTENTION_SINCE.get(card.architecture or "")
    return wmma_shape and since is not None and (build_date is None or build_date >= since)


# Backends whose prompt attention runs on the matrix units for some rows and on the shader
# ALUs for others: two kernels, each with its own fitted efficiency.
_SPLIT_ATTENTION_BACKENDS = ("rocm",)


def splits_attention(backend: str) -> bool:
    """True for a backend whose attention kernels split between the matrix units and the
    shader ALUs (ROCm): its rows on the matrix units (matrix_attention) take the backend's
    matrix-attention efficiency, not its k."""
    return backend in _SPLIT_ATTENTION_BACKENDS


def attention_tflops(card: Card, backend: str, matrix: bool = False) -> float | None:
    """Peak rate of the prompt's attention (Q·Kᵀ, P·V in FP16), TFLOPS; None if unknown: the
    FP16 matrix rate where the backend's flash-attention kernels use the matrix units (always,
    or with `matrix`: matrix_attention says so for the row), else the shader rate
    (shader_tflops)."""
    if backend in _MATRIX_ATTENTION_BACKENDS or matrix:
        return prompt_matrix_tflops(card, quantized=False)
    return shader_tflops(card)


def power_factor(card: Card, watts_per_tflops: float, exponent: float, quantized: bool = True,
                 int8_mmq: bool = True, backend: str = "cuda", bf16: bool = False,
                 build_date: str | None = None) -> float:
    """Share of its matrix rate a card sustains in a long compute-bound prompt, ≤ 1.

    Prompt processing keeps the matrix units busy, and a card whose board power is small for
    its peak rate (datacenter and workstation parts: an RTX 6000 Ada has 300 W for the AD102
    that a GeForce RTX 4090 gives 450 W; a 70 W Tesla T4 or Arc Pro B50) clocks down to stay
    within it. Below `watts_per_tflops` watts per peak T(FL)OPS of the units the prompt's GEMMs
    run on (prompt_matrix_tflops for `quantized`, `int8_mmq` and `backend`: the int8 peak for
    MMQ, the FP16 peak, half of it, for F16 weights and pre-MMQ builds' cuBLAS GEMMs, which
    draw the same board power for half the operations) the rate falls as
    (TDP ÷ (watts_per_tflops × peak)) ** exponent (dynamic power grows faster than the clock:
    voltage rises with it). 1 where the TDP or the rate is unknown, or the term is off.
    `build_date`: the build's (prompt_matrix_tflops).
    """
    peak = prompt_matrix_tflops(card, quantized, int8_mmq, backend, bf16, build_date)
    if not card.tdp_w or not peak or watts_per_tflops <= 0 or exponent <= 0:
        return 1.0
    return float(min(1.0, card.tdp_w / (watts_per_tflops * peak)) ** exponent)


def dequant_class(quant: str) -> DequantClass:
    """Dequantization class of a GGUF type name ("Q4_K_M" -> "k", "Q4_0" -> "legacy")."""
    q = quant.upper()
    if q in UNQUANTIZED:
        return "float"
    if q.startswith("MXFP4"):
        return "mxfp4"
    if q.startswith(("IQ", "TQ")):
        return "iq"
    if "_K" in q:
        return "k"
    return "legacy"


# NVIDIA chips without DP4A (compute capability below 6.1: Fermi, Kepler, Maxwell, and GP100, the
# only Pascal chip with HBM2; ggml-cuda's MIN_CC_DP4A is 610): llama.cpp's quantized dot products
# (ggml_cuda_dp4a) fall back to four separate int8 multiply-adds where DP4A does one instruction.
_PRE_DP4A = ("Tesla", "Fermi", "Kepler", "Maxwell")


def has_dp4a(card: Card) -> bool:
    """True for an NVIDIA chip with the DP4A instruction (compute capability 6.1 and later)."""
    arch = card.architecture or ""
    if card.vendor != "NVIDIA" or arch.startswith(_PRE_DP4A):
        return False
    return not (arch == "Pascal" and (card.memory_type or "").startswith("HBM"))


# Decode work of llama.cpp's batch-1 matrix-vector kernels per weight, counted from the source
# rather than fitted (fitted, it traded against the bandwidth term: without the Llama 2 rows the
# k-quants' work went 5 -> 15 FLOPs per weight and HBM's 1/η fell to match). Quantized types:
# mul_mat_vec_q (ggml/src/ggml-cuda/mmvq.cu) with the type's vec_dot_<type>_q8_1 function of
# ggml/src/ggml-cuda/vecdotq.cuh, the same source for HIP; floats: mul_mat_vec_f
# (ggml/src/ggml-cuda/mmvf.cu: F16 as half2 multiply-adds, BF16 converted to FP32 first).
# (operations, weights) of one call, one per C-level operation: the unpacking (shifts, masks,
# ors, byte permutes of the 16-entry tables, sign and grid look-up arithmetic), the int8 dot
# products (one dp4a per 4 weights, two where the k-quants also sum the activations for their
# minima), the scale unpacking per block and super-block and the scale arithmetic, and the
# accumulation; not loads or index arithmetic (get_int_b2: 2, get_int_b1: 6 operations).
# One operation per lane is one issue slot, 2 FLOPs at the FP32 shader rate (an FMA).
# The Vulkan and Metal shaders are not counted apart: they take the same figures.
KERNEL_DEQUANT_OPS: dict[str, tuple[int, int]] = {
    "F32": (2, 2),  # two FMAs per float2
    "F16": (2, 2),  # a float2 -> half2 pack, one half2 FMA
    "BF16": (4, 2),  # two bf16 -> f32 conversions, two FMAs
    "Q4_0": (21, 16),  # vec_dot_q4_0_q8_1: 2 ints × (3 unpack + 2 dp4a), 4 load-combine, 7 tail
    "Q4_1": (17, 16),  # vec_dot_q4_1_q8_1: as Q4_0 on 4-byte-aligned ints, half2 min product
    "Q5_0": (78, 16),  # vec_dot_q5_0_q8_1: the fifth bits inserted one byte at a time (12 ops/int)
    "Q5_1": (69, 16),  # vec_dot_q5_1_q8_1
    "Q8_0": (12, 8),  # vec_dot_q8_0_q8_1: 2 load-combines, 2 dp4a, 6 scale and accumulate
    "Q2_K": (69, 16),  # vec_dot_q2_K_q8_1: 4 × (scale, min broadcast, 2 dp4a)
    "Q3_K": (109, 16),  # vec_dot_q3_K_q8_1: 6-bit scales split in two fields, high-bit mask
    "Q4_K": (45, 16),  # vec_dot_q4_K_q8_1: 6-bit scale/min unpack, 2 × (4 unpack + 4 dp4a)
    "Q5_K": (63, 16),  # vec_dot_q5_K_q8_1: Q4_K plus the fifth bits
    "Q6_K": (32, 8),  # vec_dot_q6_K_q8_1: 2 × (low, high bits, -32, dp4a, scale)
    "IQ4_NL": (38, 16),  # vec_dot_iq4_nl_q8_1: get_int_from_table_16, 12 byte ops per int
    "IQ4_XS": (72, 32),  # vec_dot_iq4_xs_q8_1: the same table, 6-bit block scales
    "MXFP4": (48, 16),  # vec_dot_mxfp4_q8_1: the same table on byte-aligned ints, e8m0 scale
    "IQ1_S": (56, 32),  # vec_dot_iq1_s_q8_1: grid index, two nibble masks per int
    "IQ1_M": (102, 32),  # vec_dot_iq1_m_q8_1: IQ1_S plus deltas and scale assembly
    "IQ2_XXS": (84, 32),  # vec_dot_iq2_xxs_q8_1: grid, 7-bit signs (popc), vcmpne4/vsub4
    "IQ2_XS": (88, 32),  # vec_dot_iq2_xs_q8_1
    "IQ2_S": (104, 32),  # vec_dot_iq2_s_q8_1: signs assembled by shifts
    "IQ3_XXS": (91, 32),  # vec_dot_iq3_xxs_q8_1
    "IQ3_S": (115, 32),  # vec_dot_iq3_s_q8_1: 9-bit grid indices
}
# File types whose ggml type has no mul_mat_vec_q kernel counted above (the ternary TQ types):
# the nearest counted type, a 1.6-2 bit grid-less unpack with one scale per block.
_UNCOUNTED_TYPE = {"TQ1_0": "IQ1_S", "TQ2_0": "IQ1_S"}
# A file type of no known name: its class's plainest type.
_CLASS_TYPE = {"float": "F16", "legacy": "Q4_0", "k": "Q4_K", "iq": "IQ4_XS", "mxfp4": "MXFP4"}


def kernel_dequant_flops(quant: str) -> float:
    """Decode work per weight of `quant` (a file type: its main ggml type's kernel,
    weights.FTYPE_DEFAULT_TYPE) from KERNEL_DEQUANT_OPS, FLOP-equivalents at the shader rate.
    The higher-bit tensors a mix adds (Q6_K in Q4_K_M) are not counted apart."""
    name = quant.strip().upper().replace("-", "_")
    ggml = FTYPE_DEFAULT_TYPE.get(name) or FTYPE_DEFAULT_TYPE.get(f"{name}_MOE") or name
    ggml = _UNCOUNTED_TYPE.get(ggml, ggml)
    ops, weights = KERNEL_DEQUANT_OPS.get(ggml) or KERNEL_DEQUANT_OPS[
        _CLASS_TYPE[dequant_class(name)]]
    return 2.0 * ops / weights


# AMD chips whose Vulkan driver reports no accelerated 4×8-bit dot product. ggml-vulkan builds
# its int8 (q8_1) matrix-vector and matrix-matrix shaders only where the driver reports
# integerDotProduct4x8BitPackedSignedAccelerated (ggml-vulkan.cpp, `device->integer_dot_product`);
# RADV reports it from Mesa's ac_gpu_info.c `has_accelerated_dot_product`: Vega 20 (GCN 5.1),
# CDNA and every RDNA chip but Navi 10. Elsewhere the quantized weights go through the float
# dequantizing shaders, the same dot products done as separate multiply-adds. ROCm's
# ggml_cuda_dp4a likewise uses the chip's dot instructions on gfx906, CDNA and RDNA 2 and later
# and emulates them on GCN 5.0 and older and on RDNA 1 (ggml-cuda/common.cuh).
_AMD_NO_DOT = ("GCN 1", "GCN 2", "GCN 3", "GCN 4", "GCN 5.0", "TeraScale")
_NAVI10_NAMES = ("5600", "5700")  # RDNA 1.0 boards on Navi 10 (Navi 12/14: 5300, 5500, HBM2)


def has_int8_dot(card: Card, backend: str) -> bool:
    """True where llama.cpp's quantized decode kernels run hardware int8 dot products on the
    card under `backend`: NVIDIA from compute capability 6.1 (has_dp4a) under CUDA; AMD under
    Vulkan and ROCm but the chips above (_AMD_NO_DOT, Navi 10; RDNA 1 as a whole under ROCm);
    True for any other case (no evidence of an emulated path)."""
    if card.vendor == "NVIDIA" and backend == "cuda":
        return has_dp4a(card)
    if card.vendor == "AMD" and backend in ("vulkan", "rocm"):
        arch = card.architecture or ""
        if arch.startswith(_AMD_NO_DOT):
            return False
        if arch == "RDNA 1.0":
            navi10 = (any(n in card.name for n in _NAVI10_NAMES)
                      and not (card.memory_type or "").startswith("HBM"))
            return backend == "vulkan" and not navi10
    return True


def emulated_dot_work(card: Card, backend: str, quant: str) -> float:
    """Extra int8 dot-product work per weight of a decode step, in units of the plain
    (legacy-class) dequantization work: DP4A_PER_FP32 − 1 for quantized weights on a chip whose
    kernels under `backend` have no hardware int8 dot product (has_int8_dot: each dot product
    done as four separate multiply-adds), else 0. Every quantized class multiplies its weights
    by the same int8 activations, so the penalty is per weight, not a multiple of a class's own
    unpacking work."""
    if dequant_class(quant) != "float" and not has_int8_dot(card, backend):
        return DP4A_PER_FP32 - 1.0
    return 0.0


def attended_tokens(arch: Architecture, context: float) -> float:
    """Earlier tokens one new token attends to, summed over the attention layers, tokens·layers.

    Sliding-window layers see at most their window; linear-attention layers none; KV-shared
    layers attend like the others (over a borrowed cache).
    """
    return sum(g.layers * _seen(g, context) for g in attention_groups(arch))


def _seen(group: AttentionGroup, context: float) -> float:
    """Earlier tokens one layer of `group` attends to at `context`, tokens."""
    return context if group.window is None else min(context, float(group.window))


def attention_flops_per_token(arch: Architecture, context: float) -> float:
    """FLOPs of attention for one token over `context` earlier tokens, FLOP: per layer and
    query head, Q·Kᵀ (2 × the key size) and P·V (2 × the value size) per token it sees, with
    each kind of layer's own head shape (Gemma 4's global layers: 512-wide heads)."""
    return sum(2.0 * g.q_heads * (g.qk_dim + g.v_dim) * g.layers * _seen(g, context)
               for g in attention_groups(arch))


def _moe_layers(arch: Architecture) -> int:
    """Layers whose FFN is a routed mixture of experts, count."""
    if arch.layer_ffns:
        return arch.layer_ffns.count("E")
    return arch.num_layers - arch.first_dense_layers


def moe_expert_params_per_token(arch: Architecture) -> float:
    """Parameters of the routed experts one token multiplies (not shared experts), count."""
    if not arch.is_moe or not arch.num_experts_active or not arch.moe_intermediate_size:
        return 0.0
    matrices = 3 if arch.ffn_gated else 2
    return float(
        _moe_layers(arch)
        * arch.num_experts_active
        * matrices
        * arch.expert_width
        * arch.moe_intermediate_size
    )


def moe_expert_matrices_per_token(arch: Architecture) -> float:
    """Routed expert matrices one generated token multiplies, count (0 for dense models):
    MoE layers × experts per token × matrices per expert (3 gated, 2 not). Each is a matrix-
    vector product over one expert's few MB of weights (llama.cpp's mul_mat_vec_id), whose
    extra cost beyond its bytes is Calibration.moe_matrix_mb."""
    if not arch.is_moe or not arch.num_experts_active:
        return 0.0
    return float(_moe_layers(arch) * arch.num_experts_active * (3 if arch.ffn_gated else 2))


def moe_expert_gemms_per_token(arch: Architecture, prompt_tokens: int, ubatch: int) -> float:
    """Expert GEMMs a prompt runs per token, count (0 for dense models).

    llama.cpp's expert matrix product (mul_mat_id) routes a micro-batch's rows to their
    experts and runs each expert that got rows as its own GEMM: per micro-batch of r rows,
    MoE layers × matrices per expert (3 gated, 2 not) × the experts in use, n × (1 − (1 −
    k/n)^r) for k of n experts per token. Where it does (expert_gemm_loop: unquantized
    experts on CUDA and ROCm without an MMF kernel for them) each such GEMM has a fixed cost
    (a library GEMM's launch and set-up) that its 8-64 rows do not hide; the fitted time per
    GEMM (Calibration.moe_expert_gemm_us) charges it per token.
    """
    n, k = arch.num_experts or 0, arch.num_experts_active or 0
    rows = min(prompt_tokens, ubatch)
    if not arch.is_moe or n <= 0 or k <= 0 or rows <= 0:
        return 0.0
    used = n * (1.0 - (1.0 - min(k, n) / n) ** rows)
    matrices = 3 if arch.ffn_gated else 2
    return _moe_layers(arch) * matrices * used / rows


def expert_gemm_loop(card: Card, backend: str, quantized: bool, bf16: bool = False) -> bool:
    """True where llama.cpp runs a prompt's expert matrix product as one GEMM per expert.

    ggml-cuda's mul_mat_id (ggml-cuda.cu ggml_cuda_mul_mat_id, CUDA and ROCm alike) takes MMQ
    for quantized experts, one kernel for every expert; for F16 / BF16 ones its MMF kernel
    only on NVIDIA tensor cores that take the type (ggml_cuda_should_use_mmf: F16 from Turing,
    BF16 from Ampere; micro-batches up to 512 tokens for expert matrices of at most 1024 rows,
    128 above, which is not modelled). Elsewhere (AMD; older NVIDIA) it copies the routing to
    the host, synchronising the stream twice, and loops over the experts that got rows, one
    cuBLAS / hipBLAS GEMM each: the GEMMs moe_expert_gemms_per_token counts, each with a fixed
    time (Calibration.moe_expert_gemm_us). Vulkan's mul_mm_id and Metal's kernel_mul_mm_id
    are one dispatch for all experts.
    """
    if quantized or backend not in ("cuda", "rocm"):
        return False
    if card.vendor != "NVIDIA":
        return True
    arch = card.architecture or ""
    return not (card.tflops_fp16_derived and arch.startswith(_BF16_TENSOR if bf16 else _INT8_MMA))


def expert_batch(arch: Architecture, prompt_tokens: int, ubatch: int) -> float:
    """Mean rows each routed expert's GEMM gets in one micro-batch, tokens (inf for dense)."""
    if not arch.is_moe or not arch.num_experts or not arch.num_experts_active:
        return math.inf
    return min(prompt_tokens, ubatch) * arch.num_experts_active / arch.num_experts


# Expert formats that ggml-vulkan multiplies at decode in its matrix-vector shader
# (ggml-vulkan.cpp ggml_vk_use_mul_mat_vec_id: F32, F16 or a quantized type); any other (BF16)
# takes the matrix-matrix kernel mul_mm_id, whose small pipeline (s_warptile_id, chosen for 32
# columns or fewer: ggml_vk_guess_matmul_id_pipeline) computes a whole 32-column tile for the
# token's one column.
_VULKAN_MAT_VEC_ID_UNQUANTIZED = ("F32", "F16")
VULKAN_DECODE_EXPERT_TILE = 32


def decode_expert_gemm_flops(expert_params: float, backend: str, quant: str) -> float:
    """FLOPs of a generated token's routed experts where its backend runs them in a
    matrix-matrix kernel (Vulkan, BF16 experts: a 32-column tile for one token), else 0; timed
    at the shader rate ÷ a fitted share (speed.decode_expert_gemm_work).
    Evidence: on one Strix Halo under RADV (kyuz0/amd-strix-halo-toolboxes, build 9187) BF16
    MoE decode runs at 0.41-0.79 of ROCm's while its dense BF16 files and quantized MoE files
    run at 0.92-1.34 at depth 0 (data/measured/README.md)."""
    if backend != "vulkan" or expert_params <= 0:
        return 0.0
    if quant in _VULKAN_MAT_VEC_ID_UNQUANTIZED or quant not in UNQUANTIZED:
        return 0.0
    return 2.0 * expert_params * VULKAN_DECODE_EXPERT_TILE


# The widest column tile of each backend's expert matrix product (MUL_MAT_ID), token columns.
# CUDA and ROCm run it in MMQ, which picks one tile width for every expert of the call from the
# micro-batch's token count (ggml-cuda/mmq.cu passes the batch's tokens as ncols_max for the
# MoE path; mmq.cuh mul_mat_q_case takes the mmq_x, in steps of 8 up to get_mmq_x_max_host,
# with the fewest column tiles): up to 128 on matrix units (get_mmq_x_max_host: NVIDIA's int8
# MMA, Turing and later; AMD's WMMA, RDNA 3 and 4, and MFMA, CDNA), 64 on older chips. Each
# expert runs whole tiles over the rows routed to it, so an expert with fewer rows than the tile
# pays for the tile. Vulkan's mul_mm_id takes its large pipeline (128-column tiles) above 64
# columns, the medium (64) above 32, else the small (32) (ggml-vulkan.cpp
# ggml_vk_guess_matmul_id_pipeline); the backends that borrow Vulkan's parameters (SYCL,
# OpenCL, CPU) borrow its tiles. Metal's kernel_mul_mm_id: 32 columns. (Current ggml-vulkan
# enables no large mul_mm_id tile on AMD, mul_mat_id_l; modelled, it moved the fit's Vulkan φ
# from 1.0 to 0.55 along a flat objective and cost the prompt figures under every protocol:
# README, "Validation that simulates novelty".)
MMQ_TILE_MAX = 128
MMQ_TILE_MAX_OLD = 64  # NVIDIA before Turing; AMD without WMMA or MFMA (RDNA 1-2, GCN)
_MATRIX_AMD = ("RDNA 3", "RDNA 4", "CDNA")
METAL_MM_ID_TILE = 32
VULKAN_MM_ID_TILES = (32, 64, 128)


def moe_tile_columns(card: Card, backend: str, rows: int) -> int:
    """Column tile width of the expert GEMMs of a micro-batch of `rows` tokens, columns."""
    rows = max(1, rows)
    if backend == "metal":
        return METAL_MM_ID_TILE
    if backend in ("cuda", "rocm"):
        arch = card.architecture or ""
        wide = arch.startswith(_INT8_MMA if card.vendor == "NVIDIA" else _MATRIX_AMD)
        widest = MMQ_TILE_MAX if wide else MMQ_TILE_MAX_OLD
        tiles = math.ceil(rows / widest)  # the fewest tiles; the first (narrowest) width in
        return 8 * math.ceil(math.ceil(rows / tiles) / 8)  # steps of 8 that reaches them
    return next((t for t in VULKAN_MM_ID_TILES if rows <= t), VULKAN_MM_ID_TILES[-1])


@functools.lru_cache(maxsize=4096)
def _tiles_per_expert(mean_rows: float, tile: int) -> float:
    """Mean column tiles one expert runs, E[ceil(X / tile)], for X ~ Poisson(mean_rows) rows
    (k of n experts per token, n large: the binomial count of a micro-batch's rows), tiles."""
    top = int(mean_rows + 12.0 * math.sqrt(mean_rows) + tile + 10)
    cdf, tiles = 0.0, 0.0
    for x in range(top + 1):
        cdf += math.exp(x * math.log(mean_rows) - mean_rows - math.lgamma(x + 1))
        if x % tile == 0:  # P(X > t × tile) for t = x / tile: one more tile past that count
            tiles += max(0.0, 1.0 - cdf)
    return tiles


def moe_tile_flops_per_token(expert_params: float, batch: float, tile: int,
                             efficiency: float = 1.0) -> float:
    """Extra FLOP-equivalents per token from expert GEMMs run in whole tiles, their own FLOPs at
    `efficiency` (φ, Calibration.moe_expert_gemm_efficiency) of the dense GEMMs' rate, FLOP.

    An expert with X rows runs ceil(X / `tile`) tiles of `tile` columns, each as long as a full
    one (moe_tile_columns), so the experts' work is charged at tile × E[ceil(X / tile)] ÷
    `batch` (the mean rows per expert) × its FLOPs: 8× at 16 rows in 128-column tiles, about
    1 + tile ÷ (2 × batch) for batches of many tiles; the experts' own FLOPs are charged ÷ φ
    more. φ is the one fitted number: a MoE layer's expert GEMMs are a ragged set of small
    GEMMs (each expert's rows gathered by the mul_mat_id kernels' row-id pass, a few tiles per
    expert per micro-batch), which fill the GPU worse than one dense GEMM of the same FLOPs;
    the empty columns of a tile are already counted at the kernel's rate. 0 for dense models.
    """
    if expert_params <= 0 or not math.isfinite(batch) or batch <= 0 or tile <= 0:
        return 0.0
    padded = tile * _tiles_per_expert(round(batch, 6), tile) / batch
    return 2.0 * expert_params * max(0.0, padded - 1.0 + 1.0 / efficiency - 1.0)


def attention_score_bytes(arch: Architecture, context: float) -> float:
    """Bytes of the f32 attention scores written and read again without flash attention, B.

    Without -fa, llama.cpp materialises K·Qᵀ (heads × context floats per layer) and reads it
    back for the softmax and for P·V; flash attention keeps it on chip.
    """
    return sum(2.0 * 4.0 * g.q_heads * g.layers * _seen(g, context)
               for g in attention_groups(arch))


def decode_kv_read_bytes(arch: Architecture, context: float, cache_bytes: float,
                         kv_type: str = "f16", flash_attn: bool = True) -> float:
    """KV bytes one decoded token reads at a mean `context`, B: the cache as the runtime lays it
    out (`cache_bytes`, at max(1, round(context)) cells), the rows KV-shared layers borrow, and
    without flash attention the attention scores written and read back. The fit's observations
    and the engine both take it from here."""
    kv = cache_bytes + kv_borrowed_bytes(arch, max(1, round(context)), kv_type)
    if not flash_attn:
        kv += attention_score_bytes(arch, context)
    return kv
