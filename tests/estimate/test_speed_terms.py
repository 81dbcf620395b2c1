"""Card classes, honest shader rates, dequantization classes, attention and MoE terms."""
from __future__ import annotations

import dataclasses
import math

import pytest

from tpscalc.catalog import get_card, get_model
from tpscalc.catalog.schema import Card
from tpscalc.catalog.slug import slugify
from tpscalc.estimate import speed_terms as st
from tpscalc.estimate.calibration import BackendParams, Calibration
from tpscalc.estimate.speed import decode_estimates, effective_eta


@pytest.mark.parametrize("name, memory, device", [
    ("H100 SXM5 80 GB", "hbm", "datacenter HBM"),
    ("GeForce RTX 4090", "gddr", "consumer GDDR"),
    ("GB10", "unified", "iGPU / unified"),
    ("Ryzen AI Max+ 395", "unified", "iGPU / unified"),
    ("Apple M3 Max (40-core GPU)", "unified", "Apple"),
])
def test_memory_and_device_class(name: str, memory: str, device: str) -> None:
    c = get_card(name)
    assert st.memory_class(c) == memory and st.device_class(c) == device


def test_apple_has_no_class_offset_key() -> None:
    assert st.efficiency_class(get_card("Apple M3 Max (40-core GPU)")) == ""
    assert st.efficiency_class(get_card("A100 SXM4 80 GB")) == "hbm"


@pytest.mark.parametrize("name, cls", [
    ("L40S", "gddr_pro"), ("RTX 6000 Ada Generation", "gddr_pro"), ("Tesla T4", "gddr_pro"),
    ("GeForce RTX 4090", ""), ("GeForce RTX 4060 Mobile", ""), ("GB10", "unified"),
])
def test_professional_gddr_boards_have_their_own_class(name: str, cls: str) -> None:
    assert st.efficiency_class(get_card(name)) == cls


@pytest.mark.parametrize("name, dp4a", [
    ("Tesla P100 PCIe 16 GB", False),  # GP100, compute capability 6.0
    ("Quadro GP100", False),
    ("GeForce GTX 1080 Ti", True),  # GP102, 6.1
    ("Jetson TX2", True),  # GP10B, 6.2: fast FP16 but LPDDR4, not GP100
    ("TITAN V", True),
    ("GeForce GTX 980 Ti", False),  # Maxwell
    ("Radeon RX 7900 XTX", False),  # not an NVIDIA chip: no CUDA DP4A question
])
def test_has_dp4a(name: str, dp4a: bool) -> None:
    assert st.has_dp4a(get_card(name)) is dp4a


def test_emulated_dot_products_without_dp4a_under_cuda_only() -> None:
    p100, titan = get_card("Tesla P100 PCIe 16 GB"), get_card("TITAN V")
    assert st.emulated_dot_work(p100, "cuda", "Q4_0") == 3.0  # four multiply-adds for one
    assert st.emulated_dot_work(p100, "cuda", "Q4_K_M") == 3.0
    assert st.emulated_dot_work(p100, "cuda", "IQ4_XS") == 3.0
    assert st.emulated_dot_work(p100, "cuda", "F16") == 0.0  # no int8 dot products
    assert st.emulated_dot_work(p100, "vulkan", "Q4_0") == 0.0
    assert st.emulated_dot_work(titan, "cuda", "Q4_0") == 0.0


@pytest.mark.parametrize(("name", "backend", "dot"), [
    ("Radeon RX 480", "vulkan", False),  # Polaris (GCN 4): RADV reports no accelerated dot4
    ("Radeon RX Vega 64", "vulkan", False),  # Vega 10 (GCN 5.0)
    ("Radeon VII", "vulkan", True),  # Vega 20 (GCN 5.1) has the dot instructions
    ("Radeon RX 5700 XT", "vulkan", False),  # Navi 10
    ("Radeon RX 5500 XT", "vulkan", True),  # Navi 14: Mesa accelerates it ...
    ("Radeon RX 5500 XT", "rocm", False),  # ... ggml's HIP path emulates RDNA 1's
    ("Radeon RX 6600", "vulkan", True),
    ("Ryzen AI Max+ 395 (Radeon 8060S)", "vulkan", True),
    ("Tesla P100 PCIe 16 GB", "cuda", False),
    ("GeForce GTX 1070", "vulkan", True),  # no evidence of an emulated path: none charged
])
def test_int8_dot_products_by_chip_and_backend(name: str, backend: str, dot: bool) -> None:
    card = get_card(name)
    assert st.has_int8_dot(card, backend) is dot
    assert st.emulated_dot_work(card, backend, "Q4_K_M") == (0.0 if dot else 3.0)
    assert st.emulated_dot_work(card, backend, "BF16") == 0.0


def test_no_dp4a_penalty_is_per_weight_not_per_class() -> None:
    """The emulated dot products cost the same per weight for every quantized class: a P100's
    extra time over a TITAN-like twin with DP4A is the legacy class's work × 3, whatever the
    class's own unpacking work."""
    cal = Calibration(backends={"cuda": BackendParams(0.8, 0.0, 0.0, 1.0)},
                      dequant_flops_per_weight={"legacy": 2.0, "k": 6.0})
    p100 = get_card("Tesla P100 PCIe 16 GB")
    twin = dataclasses.replace(p100, name="Twin", slug="twin", architecture="Volta")
    shader = st.shader_tflops(p100)
    assert shader is not None
    for quant in ("Q4_0", "Q4_K_M"):
        slow, fast = decode_estimates(4e9, 0.0, 32, [p100, twin], "cuda", cal, params_read=7e9,
                                      quant=quant)
        extra_s = 1 / slow.tokens_per_s - 1 / fast.tokens_per_s
        assert extra_s == pytest.approx(3 * 2.0 * 7e9 / (shader * 1e12), rel=1e-6)


@pytest.mark.parametrize("arch, fp32, expected", [
    ("RDNA 3.5", 29.7, 14.85),  # dual issue counted in the figure: halved
    ("RDNA 4.0", 47.84, 23.92),
    ("Ada Lovelace", 82.6, 82.6),
])
def test_shader_tflops_halves_dual_issue(arch: str, fp32: float, expected: float) -> None:
    c = Card(name="X", slug="x", vendor="AMD", memory_gib=16, bandwidth_gb_s=500,
             architecture=arch, tflops_fp32=fp32)
    assert st.shader_tflops(c) == pytest.approx(expected)


@pytest.mark.parametrize("quant, cls", [("Q4_K_M", "k"), ("Q6_K", "k"), ("Q4_0", "legacy"),
                                        ("Q8_0", "legacy"), ("F16", "float"), ("MXFP4", "mxfp4"),
                                        ("IQ4_XS", "iq")])
def test_dequant_class(quant: str, cls: str) -> None:
    assert st.dequant_class(quant) == cls


def test_attention_flops_sliding_window_caps_at_window() -> None:
    arch = get_model("gpt-oss-20b").architecture
    assert arch is not None and arch.sliding_window
    swa = arch.sliding_window_layers
    full = arch.num_layers - swa - arch.linear_attention_layers
    # 32,768 tokens: full layers see all of them, window layers only their window
    expected = (
        4 * arch.num_attention_heads * arch.head_dim * (full * 32768 + swa * arch.sliding_window)
    )
    assert st.attention_flops_per_token(arch, 32768) == pytest.approx(expected)


def test_moe_expert_batch_and_tile_waste() -> None:
    arch = get_model("Qwen3-30B-A3B").architecture
    assert arch is not None
    # 512-token micro-batch, 8 of 128 experts per token: 32 rows per expert GEMM
    assert st.expert_batch(arch, 2048, 512) == pytest.approx(512 * 8 / 128)
    assert st.expert_batch(get_model("Llama 2-7B").architecture, 512, 512) == math.inf
    # 16 rows per expert in 128-column tiles: nearly every expert runs one whole tile, 8 × its
    # rows' work (7 × the experts' FLOPs extra); 32 rows: 4 ×
    assert st.moe_tile_flops_per_token(1e9, 16, 128) == pytest.approx(7 * 2e9, rel=1e-3)
    assert st.moe_tile_flops_per_token(1e9, 32, 128) == pytest.approx(3 * 2e9, rel=1e-3)
    # many tiles per expert: only the last one is partly empty, about tile / (2 × rows) extra
    assert st.moe_tile_flops_per_token(1e9, 1024, 128) == pytest.approx(
        2e9 * 128 / (2 * 1024), rel=0.05)
    assert st.moe_tile_flops_per_token(1e9, math.inf, 128) == 0.0
    assert st.moe_tile_flops_per_token(0.0, 16, 128) == 0.0


def test_expert_gemms_at_a_share_of_the_dense_rate_cost_their_flops_over_it() -> None:
    # φ = 0.5: the experts' own FLOPs count twice; the tiles' empty columns as before
    padding = st.moe_tile_flops_per_token(1e9, 32, 128)  # 3 × the FLOPs at φ = 1
    assert st.moe_tile_flops_per_token(1e9, 32, 128, 0.5) == pytest.approx(padding + 2e9)
    assert st.moe_tile_flops_per_token(1e9, 1e6, 128, 0.8) == pytest.approx(
        2e9 * 0.25, rel=1e-3)  # whole tiles: the FLOPs ÷ 0.8, a quarter more


@pytest.mark.parametrize(("card", "backend", "rows", "tile"), [
    ("GeForce RTX 4090", "cuda", 512, 128),  # MMQ with int8 MMA: up to 128 columns
    ("GeForce RTX 4090", "cuda", 100, 104),  # one tile, the narrowest multiple of 8 holding 100
    ("GeForce GTX 1080 Ti", "cuda", 512, 64),  # DP4A MMQ: up to 64
    ("Radeon RX 7900 XTX", "rocm", 512, 128),  # WMMA
    ("Radeon RX 6800 XT", "rocm", 512, 64),  # RDNA 2: no WMMA, the DP4A kernel's 64
    ("Radeon Instinct MI100", "rocm", 512, 128),  # CDNA's MFMA: the matrix-unit MMQ's 128
    ("Radeon Instinct MI50", "rocm", 512, 64),  # GCN 5 (gfx906): no MFMA
    ("Radeon RX 7900 XTX", "vulkan", 512, 128),  # mul_mm_id's large pipeline above 64 columns
    ("Radeon RX 7900 XTX", "vulkan", 40, 64),
    ("Apple M2 Ultra (76-core GPU)", "metal", 512, 32),  # kernel_mul_mm_id's 32-column tiles
])
def test_expert_gemm_tile_is_the_backend_kernels_own(card: str, backend: str, rows: int,
                                                     tile: int) -> None:
    assert st.moe_tile_columns(get_card(card), backend, rows) == tile


def test_eta_never_above_spec() -> None:
    assert effective_eta(1.3, 0.0) == 1.0
    assert effective_eta(0.8, 0.25) == pytest.approx(1 / (1.25 + 0.25))


def test_dequant_term_slows_low_shader_rate_card() -> None:
    """Same bandwidth, 4× less shader rate: the dequantization term costs more time."""
    cal = Calibration(
        backends={"cuda": BackendParams(0.8, 0.0, 0.0, 1.0)}, dequant_flops_per_weight={"k": 4.0}
    )
    fast, slow = (
        Card(
            name=n,
            slug=slugify(n),
            vendor="NVIDIA",
            memory_gib=80,
            bandwidth_gb_s=2000,
            tflops_fp32=f,
            tflops_fp16_dense=300,
        )
        for n, f in (("Fast", 80.0), ("Slow", 20.0))
    )
    a, b = decode_estimates(
        4e9, 0.0, 32, [fast, slow], "cuda", cal, params_read=7e9, quant="Q4_K_M"
    )
    # 4e9 / 1.6e12 = 2.5 ms; + 4 × 7e9 / 80e12 = 0.35 ms, or / 20e12 = 1.4 ms
    assert 1 / a.tokens_per_s == pytest.approx(2.5e-3 + 0.35e-3)
    assert 1 / b.tokens_per_s == pytest.approx(2.5e-3 + 1.4e-3)
    assert b.bound == "bandwidth"


@pytest.mark.parametrize("name, quantized, expected", [
    # GeForce: the catalog holds the halved FP32-accumulate rate; INT8 = 4 × it (660.6 TOPS)
    ("GeForce RTX 4090", True, 4 * 165.15),
    ("GeForce RTX 4090", False, 2 * 165.15),  # F16 through cuBLAS: the full FP16 rate
    ("A100 SXM4 80 GB", True, 2 * 311.87),  # datacenter: INT8 = 2 × the full FP16 rate
    ("A100 SXM4 80 GB", False, 311.87),
    ("Tesla V100 PCIe 16 GB", True, 113.05),  # Volta: no int8 MMA, FP16 cuBLAS
    ("GeForce GTX 1080 Ti", True, 4 * 11.34),  # Pascal 6.1: DP4A at 4 × FP32
    ("Tesla P100 PCIe 16 GB", True, 19.05),  # GP100: no DP4A, FP16 cuBLAS
    ("Radeon RX 7900 XTX", True, 122.78),  # other vendors: the catalog's matrix rate
    ("GeForce GTX 1660", True, 5.027),  # TU116: cc 7.5 without tensor cores, the FP32 rate
])
def test_prompt_matrix_tflops(name: str, quantized: bool, expected: float) -> None:
    rate = st.prompt_matrix_tflops(get_card(name), quantized)
    assert rate == pytest.approx(expected, rel=1e-3)


@pytest.mark.parametrize("name, expected", [
    # cooperative matrices on tensor cores, FP16 accumulate (f16acc pipelines): GeForce's full
    # rate, twice the catalog's FP32-accumulate figure; a workstation card's is not halved
    ("GeForce RTX 4090", 330.3),
    ("RTX A6000", 154.83),
    ("GeForce GTX 1070", 6.463),  # Pascal: no matrix units, FP16 at 1/64: the FP32 rate
    # Intel Xe2 in a current build: the XMX engines (PR #18178's tiles, xe2_coopmat)
    ("Arc B580", 109.36),
    ("Radeon RX 7900 XTX", 122.78),  # AMD: WMMA, the catalog's dense FP16 rate
    ("Arc Pro B70", 183.5),  # 8x its FP32 rate, Intel's published Arc Pro figure
    ("Arc A770", 19.66),  # Alchemist: ggml-vulkan leaves its XMX engines idle, the shader ALUs
])
def test_vulkan_matrix_rate_by_architecture(name: str, expected: float) -> None:
    card = get_card(name)
    assert st.prompt_matrix_tflops(card, True, backend="vulkan") == pytest.approx(expected,
                                                                                  rel=1e-3)
    assert st.vulkan_matrix_tflops(card) == st.prompt_matrix_tflops(card, False,
                                                                     backend="vulkan")


@pytest.mark.parametrize("date, tuned", [
    (None, True),  # a current build
    ("2026-07-17", True), ("2026-01", True),  # from PR #18178's tiles on
    ("2025-06-04", False), ("2025-12", False),  # PR #14001's untuned tiles
    ("", False),  # an undated row: taken as older
])
def test_xe2_runs_its_xmx_engines_from_the_tile_tuning_on(date: str | None, tuned: bool) -> None:
    b70, b580 = get_card("Arc Pro B70"), get_card("Arc B580")
    assert st.xe2_coopmat(b70, "vulkan", date) is tuned
    rate = st.prompt_matrix_tflops(b580, True, backend="vulkan", build_date=date)
    assert rate == pytest.approx(109.36 if tuned else 13.67, rel=1e-3)
    # the power term reads the same peak: 190 W is under 2 W a TFLOPS of XMX, not of FP32
    low = st.power_factor(b580, 2.0, 1.0, backend="vulkan", build_date=date)
    assert (low < 1.0) is tuned


@pytest.mark.parametrize("name, backend, bf16", [
    ("Arc Pro B70", "sycl", False),  # SYCL's oneDNN/oneMKL GEMMs: not ggml-vulkan's tiles
    ("Arc Pro B70", "vulkan", True),  # BF16: the shader ALUs without BF16 cooperative matrices
    ("Arc A770", "vulkan", False),  # Alchemist (Xe-HPG): XMX left idle
    ("Radeon RX 7900 XTX", "vulkan", False),  # not Intel
])
def test_xe2_xmx_rule_is_intel_xe2_vulkan_and_not_bf16(name: str, backend: str,
                                                         bf16: bool) -> None:
    assert not st.xe2_coopmat(get_card(name), backend, None, bf16)


@pytest.mark.parametrize("name, rate", [
    ("Radeon RX 7900 XTX", 61.39 / 2),  # RADV: no BF16 cooperative matrices, shader ALUs
    ("Ryzen AI Max+ 395", 29.7 / 2),  # the Strix Halo's RDNA 3.5 iGPU likewise
    ("Arc Pro B70", 22.94),  # Intel: the shader rate, as for its F16 and quantized GEMMs
    ("GeForce RTX 4090", 165.15),  # tensor cores take BF16 (Ampere on): as F16
    ("GeForce GTX 1070", 6.463),  # Pascal: the FP32 rate either way
])
def test_vulkan_bf16_gemms_run_where_the_driver_has_bf16_matrices(name: str, rate: float) -> None:
    card = get_card(name)
    assert st.prompt_matrix_tflops(card, False, backend="vulkan", bf16=True) == pytest.approx(
        rate, rel=2e-3)
    # on the other backends BF16 runs as F16 (rocBLAS/hipBLASLt and cuBLAS use the matrix units)
    assert (st.prompt_matrix_tflops(card, False, backend="rocm", bf16=True)
            == st.prompt_matrix_tflops(card, False, backend="rocm"))


@pytest.mark.parametrize(("name", "matrices"), [
    ("Qwen3.6-35B-A3B", 40 * 8 * 3),  # 40 MoE layers, 8 gated experts per token
    ("gpt-oss-20b", 24 * 4 * 3),  # 24 layers, 4 of 32 experts
    ("GLM-4.7-Flash", (47 - 1) * 4 * 3),  # its first layer's FFN is dense
    ("Llama 3.1-8B", 0),  # dense
])
def test_moe_expert_matrices_per_token(name: str, matrices: int) -> None:
    arch = get_model(name).architecture
    assert arch is not None
    assert st.moe_expert_matrices_per_token(arch) == matrices


def test_moe_expert_gemms_per_token() -> None:
    arch = get_model("gpt-oss-20b").architecture
    assert arch is not None and arch.num_experts == 32 and arch.num_experts_active == 4
    # 128 rows, 4 of 32 experts each: all but (28/32)^128 of an expert in use, 3 GEMMs each
    used = 32 * (1 - (28 / 32) ** 128)
    layers = arch.layer_ffns.count("E") if arch.layer_ffns else arch.num_layers
    assert st.moe_expert_gemms_per_token(arch, 128, 512) == pytest.approx(
        layers * 3 * used / 128)
    # a longer prompt shares each micro-batch's GEMMs among up to n_ubatch tokens
    assert st.moe_expert_gemms_per_token(arch, 2048, 512) == pytest.approx(
        st.moe_expert_gemms_per_token(arch, 512, 512))
    assert st.moe_expert_gemms_per_token(arch, 2048, 512) < st.moe_expert_gemms_per_token(
        arch, 128, 512)
    dense = get_model("Llama 2-7B").architecture
    assert dense is not None and st.moe_expert_gemms_per_token(dense, 512, 512) == 0.0


@pytest.mark.parametrize(("name", "backend", "quantized", "bf16", "loop"), [
    ("Radeon RX 7900 XTX", "rocm", False, True, True),  # no MMF on AMD: one hipBLAS GEMM each
    ("Radeon RX 7900 XTX", "rocm", True, False, False),  # MMQ: one kernel for every expert
    ("Radeon RX 7900 XTX", "vulkan", False, True, False),  # mul_mm_id: one dispatch
    ("GeForce RTX 4090", "cuda", False, True, False),  # MMF on Ada's BF16 tensor cores
    ("GeForce RTX 2080 Ti", "cuda", False, True, True),  # Turing's tensor cores take no BF16
    ("GeForce RTX 2080 Ti", "cuda", False, False, False),  # ... but F16
    ("Tesla P40", "cuda", False, False, True),  # no tensor cores
])
def test_expert_gemm_loop_follows_mul_mat_ids_kernel_choice(
        name: str, backend: str, quantized: bool, bf16: bool, loop: bool) -> None:
    assert st.expert_gemm_loop(get_card(name), backend, quantized, bf16) is loop


def test_power_factor_slows_cards_with_few_watts_per_tops() -> None:
    # RTX 6000 Ada: 300 W for 728.5 int8 TOPS (0.41 W/TOPS); RTX 4090: 450 W for 660.6 (0.68)
    ada6000, rtx4090 = get_card("RTX 6000 Ada Generation"), get_card("GeForce RTX 4090")
    assert st.power_factor(ada6000, 1.2, 0.5) == pytest.approx(
        (300 / (1.2 * ada6000.tflops_fp16_dense * 2)) ** 0.5, rel=1e-6)
    assert st.power_factor(ada6000, 1.2, 0.5) < st.power_factor(rtx4090, 1.2, 0.5) < 1.0
    # A card above the knee, a card without a TDP, and the term switched off: no change
    assert st.power_factor(get_card("Radeon RX 7900 XTX"), 1.2, 0.5) == 1.0
    assert st.power_factor(get_card("Apple M3 Max (40-core GPU)"), 1.2, 0.5) == 1.0
    assert st.power_factor(ada6000, 0.0, 0.0) == 1.0


def test_power_factor_is_against_the_peak_of_the_units_in_use() -> None:
    """F16 GEMMs (and pre-MMQ builds' cuBLAS GEMMs) run at the FP16 rate, half the int8 peak:
    the same board power is twice as many watts per TFLOPS, so they throttle less."""
    a100 = get_card("A100 PCIe 80 GB")  # 250-300 W for 624 int8 TOPS, 312 FP16 TFLOPS
    int8 = st.power_factor(a100, 1.6, 0.5)
    fp16 = st.power_factor(a100, 1.6, 0.5, quantized=False)
    old_build = st.power_factor(a100, 1.6, 0.5, int8_mmq=False)
    assert int8 < fp16 == old_build <= 1.0
    assert fp16 == pytest.approx(min(1.0, int8 ** 2 * 2) ** 0.5, rel=1e-6)


def test_attention_rate_follows_the_flash_attention_kernels() -> None:
    # CUDA: FP16 tensor cores (the full FP16 rate); ROCm on RDNA's tile kernel: the shader rate
    # (dual issue halved), so the same attention FLOPs cost R9700 8 × their matrix-rate time
    rtx4090, r9700 = get_card("GeForce RTX 4090"), get_card("Radeon AI PRO R9700")
    assert st.attention_tflops(rtx4090, "cuda") == pytest.approx(2 * 165.15, rel=1e-3)
    assert st.attention_tflops(r9700, "rocm") == st.shader_tflops(r9700)
    assert st.attention_tflops(r9700, "rocm", matrix=True) == r9700.tflops_fp16_dense
    assert st.attention_tflops(r9700, "vulkan") == st.shader_tflops(r9700)


@pytest.mark.parametrize(("model", "wmma"), [
    ("Llama 3.1-8B", True),  # 128-wide heads, 4 query heads per K/V head
    ("gpt-oss-20b", True),  # 64-wide, 8 to 1
    ("MiniMax-M2.7", True),  # 128-wide, 6 to 1
    ("Llama 2-7B", False),  # MHA: no K/V head shared
    ("gemma-4-26B-A4B", False),  # 256-wide local and 512-wide global heads
    ("Qwen3.6-35B-A3B", False),  # 256-wide
    ("GLM-4.7-Flash", False),  # MLA
])
def test_wmma_attention_shape_is_fattn_cus_choice(model: str, wmma: bool) -> None:
    arch = get_model(model).architecture
    assert arch is not None
    assert st.wmma_attention_shape(arch) is wmma


def test_rocm_attention_runs_on_wmma_for_its_shapes_in_builds_that_have_it() -> None:
    """ROCm's flash attention on RDNA: the MMA (WMMA) kernel for its head shapes in a build from
    the architecture's date on (the Strix Halo's kyuz0 logs: 2.0-2.3x at pp2048 @ d32768 from
    build 9112 to 9187, May 2026), the tile kernel on the shader ALUs otherwise; without flash
    attention the batched GEMMs on the matrix units; never on Vulkan on AMD."""
    strix, r9700 = get_card("Ryzen AI Max+ 395 (Radeon 8060S)"), get_card("Radeon AI PRO R9700")
    assert st.matrix_attention(strix, "rocm", True)  # a current build
    assert not st.matrix_attention(strix, "rocm", True, build_date="2026-05-12")
    assert st.matrix_attention(strix, "rocm", True, build_date="2026-05-16")
    assert not st.matrix_attention(strix, "rocm", True, build_date="")  # undated: older
    assert not st.matrix_attention(strix, "rocm", False)  # MHA, 256-wide heads, MLA
    assert st.matrix_attention(strix, "rocm", False, flash_attn=False)
    assert st.matrix_attention(r9700, "rocm", True, build_date="2026-02")  # RDNA 4 since January
    assert not st.matrix_attention(r9700, "rocm", True, build_date="2025-12-17")
    assert not st.matrix_attention(strix, "vulkan", True)
    assert not st.matrix_attention(get_card("Radeon RX 6900 XT"), "rocm", True)  # no WMMA
    assert st.matrix_attention(get_card("GeForce RTX 4090"), "cuda", False)


def test_vulkan_attention_runs_on_xe2s_xmx_engines_with_the_tuned_tiles() -> None:
    """ggml-vulkan's coopmat1 flash attention (or, without flash attention, its coopmat GEMMs)
    on Intel Xe2 in the builds that run its GEMMs there (xe2_coopmat); the shader ALUs before,
    and on Alchemist."""
    b70 = get_card("Arc Pro B70")
    assert st.matrix_attention(b70, "vulkan", False)
    assert st.matrix_attention(b70, "vulkan", False, flash_attn=False)
    assert not st.matrix_attention(b70, "vulkan", False, build_date="2025-06-04")
    assert not st.matrix_attention(b70, "vulkan", False, build_date="")
    assert not st.matrix_attention(get_card("Arc A770"), "vulkan", False)
    assert st.attention_tflops(b70, "vulkan", matrix=True) == pytest.approx(183.5)


def test_a_deep_rocm_prompt_is_faster_where_its_attention_runs_on_wmma() -> None:
    from tpscalc.estimate.calibration_store import calibration
    from tpscalc.estimate.speed import prefill_estimates

    cal, strix = calibration(), get_card("Ryzen AI Max+ 395 (Radeon 8060S)")
    assert cal.backends["rocm"].prefill_matrix_attention_efficiency is not None  # fitted

    def est(backend: str, wmma: bool, of: Calibration = cal, **kw: object) -> tuple[float, float]:
        e = prefill_estimates(1.6e10 + 1e11, 2048, [strix], backend, of,
                              attention_flops_per_token=1e11, wmma_attention=wmma,
                              **kw)[0]  # type: ignore[arg-type]
        assert e is not None
        return e.tokens_per_s, e.high

    assert est("rocm", True)[0] > 1.3 * est("rocm", False)[0]  # measured 2.0-2.3x at d32768
    assert est("rocm", True, build_date="2026-05-12") == est("rocm", False)
    assert est("vulkan", True) == est("vulkan", False)
    # a fit that saw no deep prompt on ROCm's matrix units (no km): the tile kernel's estimate,
    # the range's top at the matrix units' rate
    rocm = dataclasses.replace(cal.backends["rocm"], prefill_matrix_attention_efficiency=None)
    blind = dataclasses.replace(cal, backends={**cal.backends, "rocm": rocm})
    assert est("rocm", True, blind)[0] == est("rocm", False, blind)[0]
    assert est("rocm", True, blind)[1] > 1.3 * est("rocm", False, blind)[1]


@pytest.mark.parametrize("backend, quant, tiled", [
    ("vulkan", "BF16", True),  # ggml_vk_use_mul_mat_vec_id: not F32 / F16 / quantized
    ("vulkan", "F16", False), ("vulkan", "F32", False), ("vulkan", "Q8_0", False),
    ("vulkan", "MXFP4", False), ("rocm", "BF16", False), ("cuda", "BF16", False),
    ("metal", "BF16", False),
])
def test_vulkan_multiplies_bf16_experts_in_its_matrix_kernel_at_decode(
        backend: str, quant: str, tiled: bool) -> None:
    flops = st.decode_expert_gemm_flops(1e9, backend, quant)
    assert flops == (2 * 1e9 * st.VULKAN_DECODE_EXPERT_TILE if tiled else 0.0)
    assert st.decode_expert_gemm_flops(0.0, backend, quant) == 0.0  # a dense model


def test_bf16_moe_decode_on_vulkan_pays_its_expert_tiles() -> None:
    """Strix Halo, GLM-4.7-Flash's terms: BF16 experts under Vulkan cost their 32-column tiles
    at the shader rate ÷ the fitted share; a fit without such rows (factor 0) times them as the
    card's unquantized prompt GEMMs run; Q8_0 experts and ROCm pay nothing."""
    from tpscalc.estimate.calibration_store import calibration
    from tpscalc.estimate.speed import card_terms, prefill_efficiency

    cal, strix = calibration(), get_card("Ryzen AI Max+ 395 (Radeon 8060S)")
    assert cal.decode_expert_gemm_factor > 0  # fitted on the Strix Halo's BF16 MoE rows
    blind = dataclasses.replace(cal, decode_expert_gemm_factor=0.0)

    def tps(of: Calibration, backend: str, quant: str, experts: float) -> float:
        return decode_estimates(7.2e9, 0.0, 47, [strix], backend, of, params_read=3.6e9,
                                quant=quant, expert_matrices=552.0,
                                expert_params=experts)[0].tokens_per_s

    tile_flops = 2 * 1.74e9 * 32
    shader = st.shader_tflops(strix)
    assert shader
    fitted_s = tile_flops * cal.decode_expert_gemm_factor / (shader * 1e12)
    assert 1 / tps(cal, "vulkan", "BF16", 1.74e9) - 1 / tps(cal, "vulkan", "BF16", 0.0) == \
        pytest.approx(fitted_s)
    k = card_terms(strix, "vulkan", blind)
    prompt_tflops = k.prompt_rate(False, True, True)[0] * prefill_efficiency(k.params, False, True)
    prior_s = tile_flops / (prompt_tflops * 1e12)
    assert 1 / tps(blind, "vulkan", "BF16", 1.74e9) - 1 / tps(blind, "vulkan", "BF16", 0.0) == \
        pytest.approx(prior_s)
    assert 0 < prior_s < fitted_s  # the measured tiles run slower than a prompt's GEMMs
    for of in (cal, blind):
        assert tps(of, "vulkan", "Q8_0", 1.74e9) == tps(of, "vulkan", "Q8_0", 0.0)
        assert tps(of, "rocm", "BF16", 1.74e9) == tps(of, "rocm", "BF16", 0.0)


def test_dequantization_work_is_counted_from_the_kernels() -> None:
    """A calibration that sets no work takes llama.cpp's decode kernels' (2 FLOP-equivalents per
    counted operation): a file type its main ggml type's, an i-quant and MXFP4 their own table
    look-ups (not the k-quants', not none), an unknown name its class's plainest type."""
    from tpscalc.estimate.speed import dequant_flops

    none = Calibration(backends={"cuda": BackendParams(0.8, 0.0, 0.0, 1.0)})
    assert dequant_flops(none, "cuda", "Q4_K_M") == 2 * 45 / 16  # vec_dot_q4_K_q8_1
    assert dequant_flops(none, "cuda", "Q4_K_S") == dequant_flops(none, "cuda", "Q4_K_M")
    assert dequant_flops(none, "cuda", "Q8_0") == 2 * 12 / 8
    assert dequant_flops(none, "cuda", "IQ4_XS") == 2 * 72 / 32
    assert dequant_flops(none, "vulkan", "MXFP4") == 2 * 48 / 16
    work = [dequant_flops(none, "cuda", q) for q in ("F16", "Q4_0", "Q4_K_M", "Q3_K_M")]
    assert work == sorted(work)  # the more unpacking per weight, the more work
    assert st.kernel_dequant_flops("Q4_0_4_4") == st.kernel_dequant_flops("Q4_0")  # legacy
    own = Calibration(backends={}, dequant_flops_per_weight={"k": 6.0, "cuda:iq": 9.0})
    assert dequant_flops(own, "cuda", "Q4_K_M") == 6.0  # a calibration's class figure first
    assert dequant_flops(own, "cuda", "IQ4_XS") == 9.0
    assert dequant_flops(own, "metal", "IQ4_XS") == 2 * 72 / 32


def test_kernel_rate_share_adds_a_time_per_byte() -> None:
    from tpscalc.estimate.speed import kernel_rate_share

    assert kernel_rate_share(600.0, None) == 1.0
    # 1/600 + 1/200 per GB: a quarter of the bandwidth's rate
    assert kernel_rate_share(600.0, 200.0) == pytest.approx(0.25)
    assert effective_eta(1.6, 0.0, 0.25) == pytest.approx(0.4)  # the cap applies after it


@pytest.mark.parametrize("name, quantized_rate, float_rate", [
    ("Radeon RX 5700 XT", 9.754, 9.754),  # Navi 10: no int8 dot, no WMMA: the FP32 rate
    ("Radeon RX 480", 5.834, 5.834),  # GCN 4: likewise
    ("Radeon RX 6800 XT", 41.47, 20.74),  # RDNA 2: int8 dot (mul_mmq) for quantized weights
    ("Radeon RX 7900 XTX", 122.78, 122.78),  # RDNA 3: WMMA either way
])
def test_vulkan_float_shaders_on_amd_without_matrix_units(name: str, quantized_rate: float,
                                                           float_rate: float) -> None:
    card = get_card(name)
    assert st.prompt_matrix_tflops(card, True, backend="vulkan") == pytest.approx(
        quantized_rate, rel=1e-3)
    assert st.prompt_matrix_tflops(card, False, backend="vulkan") == pytest.approx(
        float_rate, rel=1e-3)
