"""Each term of the speed model against hand-worked numbers."""
from __future__ import annotations

from dataclasses import replace

import pytest

from tpscalc.catalog.schema import Card
from tpscalc.catalog.slug import slugify
from tpscalc.estimate import speed
from tpscalc.estimate.calibration import (
    BackendParams,
    Band,
    Calibration,
    LevelParams,
    MeasuredSpeed,
    family_key,
    lookup_measured,
    prefill_family_key,
)
from tpscalc.estimate.types import DecodeEstimate


def card(name: str = "Test GPU", vendor: str = "NVIDIA", bw: float = 1000.0,
         arch: str | None = "Ampere", tflops: float | None = 100.0) -> Card:
    """A minimal card for formula tests."""
    return Card(name=name, slug=slugify(name), vendor=vendor, memory_gib=24, bandwidth_gb_s=bw,
                architecture=arch, tflops_fp16_dense=tflops)


CAL = Calibration(
    backends={
        "cuda": BackendParams(decode_efficiency=0.8, overhead_per_token_us=0.0,
                              overhead_per_layer_us=20.0, prefill_efficiency=0.5,
                              prefill_quantized_factor=0.5),
        "vulkan": BackendParams(decode_efficiency=0.6, overhead_per_token_us=100.0,
                                overhead_per_layer_us=0.0, prefill_efficiency=0.25),
    },
    families={"cuda:ada-lovelace": LevelParams(0.9, 0.4, 10)},
    devices={"cuda:Known GPU": LevelParams(0.5, None, 3)},
    decode_bands={"high": Band(0.9, 1.1), "medium": Band(0.8, 1.2), "low": Band(0.6, 1.5)},
    prefill_bands={"high": Band(0.8, 1.2), "medium": Band(0.7, 1.4), "low": Band(0.5, 2.0)},
    measured={"Known GPU|Llama 2-7B|Q4_0": (MeasuredSpeed(150.0, "tg128", "cuda"),
                                            MeasuredSpeed(160.0, "tg128", "vulkan"))},
    backend_aliases={"sycl": "vulkan"},
)


def test_memory_seconds() -> None:
    # 4e9 B at 0.8 × 1000 GB/s = 4e9 / 8e11 = 5 ms
    assert speed.memory_seconds(4e9, 1000.0, 0.8) == pytest.approx(0.005)


def test_overhead_seconds() -> None:
    # 100 µs + 32 layers × 10 µs = 420 µs
    assert speed.overhead_seconds(32, 100.0, 10.0) == pytest.approx(420e-6)


def test_decode_seconds_per_token() -> None:
    # (3e9 + 1e9 KV) B / (0.5 × 500e9 B/s); overhead 40 layers × 25 µs = 1 ms
    mem, over = speed.decode_seconds_per_token(3e9, 1e9, 40, 500.0, 0.5, 0.0, 25.0)
    assert mem == pytest.approx(0.016)
    assert over == pytest.approx(0.001)


def test_prompt_mean_context() -> None:
    assert speed.prompt_mean_context(512) == pytest.approx(255.5)
    assert speed.prompt_mean_context(512, depth_tokens=100) == pytest.approx(355.5)


def test_prefill_flops_per_token() -> None:
    # 2 × 7e9 + 4 × 32 layers × 32 heads × 128 × 255.5 = 14e9 + 133,955,584
    assert speed.prefill_flops_per_token(7e9, 32, 32, 128, 255.5) == pytest.approx(14_133_955_584)


@pytest.mark.parametrize("prompt, floor_s", [(512, 0.005), (1024, 0.010)])
def test_prefill_seconds(prompt: int, floor_s: float) -> None:
    # compute: prompt × 1e10 FLOP / (0.5 × 100e12); floor: ⌈prompt/512⌉ × 4e9 / 0.8e12
    compute, floor = speed.prefill_seconds(prompt, 1e10, 100.0, 0.5, 4e9, 1000.0, 0.8)
    assert compute == pytest.approx(prompt * 1e10 / 50e12)
    assert floor == pytest.approx(floor_s)


@pytest.mark.parametrize("vendor, backend", [("NVIDIA", "cuda"), ("AMD", "rocm"),
                                             ("Apple", "metal"), ("Intel", "vulkan")])
def test_default_backend(vendor: str, backend: str) -> None:
    assert speed.default_backend(card(vendor=vendor)) == backend


def test_decode_estimate_backend_level() -> None:
    # Ampere has no family entry: backend η 0.8. t = 4e9/0.8e12 + 32 × 20 µs = 5.64 ms
    est = speed.decode_estimates(4e9, 0.0, 32, [card()], None, CAL)[0]
    assert est.tokens_per_s == pytest.approx(1 / 0.00564)
    assert est.confidence == "low" and est.bound == "bandwidth"
    assert (est.low, est.high) == pytest.approx((est.tokens_per_s * 0.6, est.tokens_per_s * 1.5))


def test_decode_estimate_levels() -> None:
    ada = card("Ada GPU", arch="Ada Lovelace")
    known = card("Known GPU", arch="Ada Lovelace")
    fam, dev = speed.decode_estimates(4e9, 0.0, 32, [ada, known], "cuda", CAL)
    assert fam.confidence == "medium"
    assert fam.tokens_per_s == pytest.approx(1 / (4e9 / 0.9e12 + 640e-6))
    assert dev.confidence == "high"
    assert dev.tokens_per_s == pytest.approx(1 / (4e9 / 0.5e12 + 640e-6))
    assert (dev.low, dev.high) == pytest.approx((dev.tokens_per_s * 0.9, dev.tokens_per_s * 1.1))


def test_decode_overhead_bound_for_tiny_model() -> None:
    # 1e8 B / 0.8e12 = 0.125 ms < 0.64 ms of overhead
    assert speed.decode_estimates(1e8, 0.0, 32, [card()], None, CAL)[0].bound == "overhead"


def test_moe_expert_matrices_cost_their_chip_makers_bytes_at_the_bandwidth() -> None:
    # 960 routed expert matrices per token, 1.5 MB each on AMD chips, under any backend: 1.44 GB
    # more at the 1000 GB/s spec bandwidth; an NVIDIA chip's maker has no such cost
    cal = replace(CAL, moe_matrix_mb={"AMD": 1.5})
    amd, nvidia = card(vendor="AMD", arch="RDNA 3.5"), card()
    for backend, eta, per_token in (("vulkan", 0.6, 100e-6), ("sycl", 0.6, 100e-6)):
        est = speed.decode_estimates(4e9, 0.0, 32, [amd, nvidia], backend, cal,
                                     expert_matrices=960.0)
        assert est[0].tokens_per_s == pytest.approx(1 / (4e9 / (eta * 1e12) + 1.44e-3
                                                         + per_token))
        assert est[1].tokens_per_s == pytest.approx(1 / (4e9 / (eta * 1e12) + per_token))
    dense = speed.decode_estimates(4e9, 0.0, 32, [amd], "vulkan", cal)[0]
    assert dense.tokens_per_s == pytest.approx(1 / (4e9 / 0.6e12 + 100e-6))


def test_unfitted_backend_borrows_alias() -> None:
    # sycl -> vulkan: η 0.6, 100 µs per token, low confidence
    est = speed.decode_estimates(4e9, 0.0, 32, [card(vendor="Intel")], "sycl", CAL)[0]
    assert est.tokens_per_s == pytest.approx(1 / (4e9 / 0.6e12 + 100e-6))
    assert est.confidence == "low"


def test_prefill_estimate() -> None:
    # compute: 512 × 1e10 / (0.5 × 0.5 quantized × 100e12) = 0.2048 s; floor 4e9/0.8e12 = 5 ms
    est = speed.prefill_estimates(1e10, 512, [card()], None, CAL, weights_bytes=4e9)[0]
    assert est is not None
    assert est.time_to_first_token_s == pytest.approx(0.2048)
    assert est.tokens_per_s == pytest.approx(512 / 0.2048)
    assert est.bound == "compute"
    f16 = speed.prefill_estimates(1e10, 512, [card()], None, CAL, quantized=False)[0]
    assert f16 is not None and f16.time_to_first_token_s == pytest.approx(0.1024)


def test_prefill_without_flash_attention_takes_the_backends_factor() -> None:
    cal = replace(CAL, backends={**CAL.backends, "cuda": replace(
        CAL.backends["cuda"], prefill_no_flash_attn_factor=0.8)})
    on, off = (speed.prefill_estimates(1e10, 512, [card()], "cuda", cal, flash_attn=fa)[0]
               for fa in (True, False))
    assert on is not None and off is not None
    assert off.time_to_first_token_s == pytest.approx(on.time_to_first_token_s / 0.8)


def test_prefill_bandwidth_floor_decides_on_weak_bandwidth() -> None:
    # 10 GB/s: floor 4e9/(0.8 × 10e9) = 0.5 s > compute 0.2048 s
    est = speed.prefill_estimates(1e10, 512, [card(bw=10.0)], None, CAL, weights_bytes=4e9)[0]
    assert est is not None and est.bound == "bandwidth"
    assert est.time_to_first_token_s == pytest.approx(0.5)


def test_prefill_none_without_tflops() -> None:
    assert speed.prefill_estimates(1e10, 512, [card(tflops=None)], None, CAL) == [None]


def test_family_key_apple_generation() -> None:
    m3 = card("Apple M3 Max (40-core GPU)", vendor="Apple", arch=None)
    assert family_key(m3, "metal") == "metal:apple-m3"


def test_a_unified_memory_chip_has_a_prompt_family_of_its_own() -> None:
    soc = replace(card("GB10", arch="Blackwell 2.0"), unified_memory=True)
    board = card("GeForce RTX 5070", arch="Blackwell 2.0")
    m3 = card("Apple M3 Max (40-core GPU)", vendor="Apple", arch=None)
    assert prefill_family_key(board, "cuda") == family_key(soc, "cuda") == "cuda:blackwell-2-0"
    assert prefill_family_key(soc, "cuda") == "cuda:blackwell-2-0+unified"
    assert prefill_family_key(m3, "metal") == "metal:apple-m3"  # every Apple chip is unified
    fams = {"cuda:blackwell-2-0": LevelParams(0.9, 0.6, 6)}
    cal = replace(CAL, families=fams)
    soc_p, board_p = (speed.card_params(c, "cuda", cal) for c in (soc, board))
    # the chip decodes with its architecture's family; unmeasured, its prompts take that
    # family's level (no class factor fitted: 1), at "low" confidence
    assert soc_p.decode_efficiency == pytest.approx(0.9)
    assert soc_p.decode_confidence == "medium"
    assert (soc_p.prefill_efficiency, soc_p.prefill_confidence) == (0.6, "low")
    assert (board_p.prefill_efficiency, board_p.prefill_confidence) == (0.6, "medium")
    cal = replace(CAL, families=fams | {"cuda:blackwell-2-0+unified": LevelParams(None, 0.3, 2)})
    soc_p = speed.card_params(soc, "cuda", cal)
    assert (soc_p.prefill_efficiency, soc_p.prefill_confidence) == (0.3, "medium")
    assert soc_p.decode_efficiency == pytest.approx(0.9)


def test_an_unmeasured_chip_inherits_its_architecture_then_its_kernels_lineage() -> None:
    # An RDNA 3.5 APU with no prompt family of its own: RDNA 3's level (the same GFX11 kernels),
    # at "low" confidence; a discrete card of the family keeps its own.
    apu = replace(card("Ryzen AI Max+ 395", vendor="AMD", arch="RDNA 3.5"), unified_memory=True)
    board = card("Radeon RX 7900 XTX", vendor="AMD", arch="RDNA 3.0")
    rocm = BackendParams(1.0, 0.0, 0.0, prefill_efficiency=0.5)
    cal = replace(CAL, backends={**CAL.backends, "rocm": rocm},
                  families={"rocm:rdna-3-0": LevelParams(None, 0.3, 4)})
    apu_p, board_p = (speed.card_params(c, "rocm", cal) for c in (apu, board))
    assert (apu_p.prefill_efficiency, apu_p.prefill_confidence) == (0.3, "low")
    assert (board_p.prefill_efficiency, board_p.prefill_confidence) == (0.3, "medium")
    # no family to inherit: the backend's level
    assert speed.card_params(apu, "rocm", replace(cal, families={})).prefill_efficiency == 0.5
    # its architecture's own family comes before the lineage, its measured family before both
    rdna35 = cal.families | {"rocm:rdna-3-5": LevelParams(None, 0.25)}
    assert speed.card_params(apu, "rocm", replace(cal, families=rdna35)).prefill_efficiency == 0.25
    own = rdna35 | {"rocm:rdna-3-5+unified": LevelParams(None, 0.2)}
    assert speed.card_params(apu, "rocm", replace(cal, families=own)).prefill_efficiency == 0.2


def test_lookup_measured_prefers_backend() -> None:
    assert lookup_measured(CAL, "Known GPU", "Llama 2-7B", "q4_0", "cuda").tokens_per_s == 150.0
    assert lookup_measured(CAL, "Known GPU", "Llama 2-7B", "Q4_0").tokens_per_s == 160.0
    assert lookup_measured(CAL, "Known GPU", "Llama 2-7B", "Q8_0") is None


def test_combined_tflops_hand_worked() -> None:
    # 1 / (0.6/100 + 0.4/25) = 1 / (0.006 + 0.016) = 45.4545... TFLOPS
    assert speed.combined_tflops(100.0, 25.0, 0.6) == pytest.approx(1 / 0.022)
    # w = 1: the tensor rate alone; w = 0: the FP32 rate alone; no FP32 rate: the tensor rate
    assert speed.combined_tflops(100.0, 25.0, 1.0) == pytest.approx(100.0)
    assert speed.combined_tflops(100.0, 25.0, 0.0) == pytest.approx(25.0)
    assert speed.combined_tflops(100.0, float("nan"), 0.3) == pytest.approx(100.0)


def test_prefill_two_term_rate() -> None:
    # T 100, F 25, w 0.5: rate 1/(0.005 + 0.02) = 40 TFLOPS; ε 0.5 × 0.5 (quantized) = 0.25
    # t = 512 × 1e10 × (0.5/100e12 + 0.5/25e12) / 0.25 = 0.512 s
    cal = Calibration(backends={"cuda": BackendParams(
        decode_efficiency=0.8, overhead_per_token_us=0.0, overhead_per_layer_us=20.0,
        prefill_efficiency=0.5, prefill_quantized_factor=0.5, prefill_tensor_share=0.5)})
    gpu = Card(name="Two-rate GPU", slug="two-rate-gpu", vendor="NVIDIA", memory_gib=24,
               bandwidth_gb_s=1000.0, architecture="Ampere", tflops_fp16_dense=100.0,
               tflops_fp32=25.0)
    est = speed.prefill_estimates(1e10, 512, [gpu, card()], None, cal)
    assert est[0] is not None and est[0].time_to_first_token_s == pytest.approx(0.512)
    # A card without an FP32 rate keeps the tensor rate alone: 512 × 1e10 / (0.25 × 100e12)
    assert est[1] is not None and est[1].time_to_first_token_s == pytest.approx(0.2048)


def test_card_tflops_falls_back_to_fp32() -> None:
    old = Card(name="Old GPU", slug="old-gpu", vendor="NVIDIA", memory_gib=8,
               bandwidth_gb_s=256.0, tflops_fp32=6.0)
    assert speed.card_tflops(old) == 6.0
    assert speed.card_prefill_tflops(old, 0.4) == pytest.approx(6.0)


def test_prefill_band_by_device_class() -> None:
    # A device class with its own band uses it; any other card the level's band
    cal = Calibration(backends=CAL.backends, prefill_bands={
        "low": Band(0.5, 2.0), "low|consumer GDDR": Band(0.8, 1.3)})
    assert speed.prefill_band(cal, "low", card()) == Band(0.8, 1.3)
    apple = card("Apple X", vendor="Apple", arch="Apple M3")
    assert speed.prefill_band(cal, "low", apple) == Band(0.5, 2.0)
    est = speed.prefill_estimates(1e10, 512, [card(), apple], "cuda", cal)
    assert est[0] is not None and est[0].high / est[0].low == (
        pytest.approx(1.3 / 0.8))


def test_prefill_band_by_class_and_backend() -> None:
    # a band for the class under one backend is preferred; other backends take the class's
    cal = Calibration(backends=CAL.backends, prefill_bands={
        "low": Band(0.5, 2.0), "low|consumer GDDR": Band(0.8, 1.3),
        "low|consumer GDDR|cuda": Band(0.9, 1.1)})
    assert speed.prefill_band(cal, "low", card(), "cuda") == Band(0.9, 1.1)
    assert speed.prefill_band(cal, "low", card(), "vulkan") == Band(0.8, 1.3)
    # where the class has no band under the backend, the backend's own comes before the
    # class's: a Vulkan iGPU scatters as Vulkan's other devices do
    cal = replace(cal, prefill_bands={**cal.prefill_bands, "low|vulkan": Band(0.4, 1.9)})
    assert speed.prefill_band(cal, "low", card(), "vulkan") == Band(0.4, 1.9)
    assert speed.prefill_band(cal, "low", card(), "cuda") == Band(0.9, 1.1)
    assert speed.prefill_band(cal, "low", card(), "rocm") == Band(0.8, 1.3)


def test_expert_gemms_fixed_time_adds_to_prompts_whose_experts_run_one_gemm_each() -> None:
    # 10 GEMMs a token at 4 µs: 40 µs a token beside the FLOPs' time, below the floor's, where
    # llama.cpp loops over the experts (BF16 experts on ROCm); MMQ's quantized experts and
    # Vulkan's one dispatch pay nothing
    cal = replace(CAL, moe_expert_gemm_us=4.0,
                  backends={**CAL.backends, "rocm": CAL.backends["cuda"]})
    amd = replace(card(vendor="AMD", arch="RDNA 3"), tflops_fp32=50.0)  # a shader rate too

    def tps(backend: str, gemms: float, quantized: bool) -> float:
        est = speed.prefill_estimates(1e10, 512, [amd], backend, cal, expert_gemms=gemms,
                                      quantized=quantized, bf16=not quantized)[0]
        assert est is not None
        return est.tokens_per_s

    assert 1 / tps("rocm", 10.0, False) == pytest.approx(1 / tps("rocm", 0.0, False) + 40e-6)
    assert tps("rocm", 10.0, True) == tps("rocm", 0.0, True)
    assert tps("vulkan", 10.0, False) == tps("vulkan", 0.0, False)


def test_expert_gemms_share_of_the_dense_rate_slows_moe_prompts_only() -> None:
    # φ = 0.5 on CUDA: 1e9 expert parameters (2e9 FLOPs a token, in whole tiles) take twice
    # their time; a dense prompt and the backends without their own φ keep the global one
    cuda = replace(CAL.backends["cuda"], prefill_expert_gemm_efficiency=0.5)
    cal = replace(CAL, backends={**CAL.backends, "cuda": cuda}, moe_expert_gemm_efficiency=0.8)

    def seconds(c: Calibration, backend: str, experts: float) -> float:
        gpu = replace(card(), tflops_fp32=25.0)  # a shader rate too, for Vulkan
        est = speed.prefill_estimates(1e10, 512, [gpu], backend, c, expert_params=experts,
                                      expert_batch=1e6)[0]
        assert est is not None
        return 1 / est.tokens_per_s

    for backend, phi in (("cuda", 0.5), ("vulkan", 0.8)):
        base = seconds(CAL, backend, 1e9)  # φ = 1
        rate = 2e9 / (seconds(replace(CAL, moe_expert_gemm_efficiency=0.5), backend, 1e9)
                      - base)  # FLOPs a second: 2e9 extra FLOPs at φ = 0.5
        assert seconds(cal, backend, 1e9) == pytest.approx(base + 2e9 * (1 / phi - 1) / rate,
                                                           rel=1e-3)
        assert seconds(cal, backend, 0.0) == pytest.approx(seconds(CAL, backend, 0.0))


def test_fp32_share_only_for_in_kernel_dequantisation() -> None:
    # w applies to quantized weights in MMQ builds; F16 GEMMs and pre-MMQ builds (weights
    # dequantized apart, then cuBLAS) run at the matrix rate alone
    gpu = Card(name="Two-rate GPU", slug="two-rate-gpu", vendor="AMD", memory_gib=24,
               bandwidth_gb_s=1000.0, architecture="RDNA 2", tflops_fp16_dense=100.0,
               tflops_fp32=25.0)
    assert speed.card_prefill_tflops(gpu, 0.5) == pytest.approx(40.0)
    assert speed.card_prefill_tflops(gpu, 0.5, quantized=False) == pytest.approx(100.0)
    assert speed.card_prefill_tflops(gpu, 0.5, int8_mmq=False) == pytest.approx(100.0)


def test_prefill_power_limit_and_attention_rate() -> None:
    # Power: 100 W for 100 TFLOPS with the knee at 4 W/TFLOPS, exponent 0.5: half the rate
    # (WMMA matrix units: the 100 TFLOPS are a matrix rate on every backend's kernels)
    hot = Card(name="Hot GPU", slug="hot-gpu", vendor="AMD", memory_gib=24, bandwidth_gb_s=1000.0,
               architecture="CDNA 2", tflops_fp16_dense=100.0, tflops_fp32=25.0, tdp_w=100.0,
               tflops_fp16_derived=True)
    base = Calibration(backends=CAL.backends)
    limited = Calibration(backends=CAL.backends, prefill_power_w_per_tflops=4.0,
                          prefill_power_exponent=0.5)
    a = speed.prefill_estimates(1e10, 512, [hot], "cuda", base, quantized=False)[0]
    b = speed.prefill_estimates(1e10, 512, [hot], "cuda", limited, quantized=False)[0]
    assert a is not None and b is not None
    assert b.time_to_first_token_s == pytest.approx(2 * a.time_to_first_token_s)
    # Attention on ROCm runs at the shader rate (25 of 100): 1e9 of its FLOPs cost 4e9
    att = speed.prefill_estimates(1e10, 512, [hot], "rocm", base, quantized=False,
                                  attention_flops_per_token=1e9)[0]
    flat = speed.prefill_estimates(1.3e10, 512, [hot], "rocm", base, quantized=False)[0]
    assert att is not None and flat is not None
    assert att.time_to_first_token_s == pytest.approx(flat.time_to_first_token_s)


def test_vendor_level_sets_decode_eta_under_its_backend() -> None:
    # vulkan:amd: η 0.9; vulkan:intel, unmeasured, keeps the backend's η 0.6
    cal = replace(CAL, vendors={"vulkan:amd": LevelParams(0.9, None, 8)})
    amd, intel = card(vendor="AMD", arch="RDNA 3.5"), card(vendor="Intel", arch="Xe2-HPG")
    est = speed.decode_estimates(4e9, 0.0, 32, [amd, intel], "vulkan", cal)
    assert est[0].tokens_per_s == pytest.approx(1 / (4e9 / 0.9e12 + 100e-6))
    assert est[1].tokens_per_s == pytest.approx(1 / (4e9 / 0.6e12 + 100e-6))
    assert est[0].confidence == est[1].confidence == "low"  # no family or device measured


def test_an_unmeasured_backend_takes_every_measured_drivers_pooled_level() -> None:
    # No Metal row fitted: an Apple chip on Metal gets the drivers' row-weighted 1/η,
    # (30 / 0.8 + 10 / 0.9 + 10 / 0.5) / 50 = 1.3722, and their mean per-token cost,
    # (30 × 0 + 20 × 100) / 50 = 40 µs, not the Vulkan backend's η 0.6 and 100 µs.
    vendors = {"cuda:nvidia": LevelParams(0.8, None, 30),
               "vulkan:amd": LevelParams(0.9, None, 10), "vulkan:intel": LevelParams(0.5, None, 10)}
    cal = replace(CAL, vendors=vendors)
    m3 = card("Apple M3 (10-core GPU)", vendor="Apple", arch=None)
    p = speed.card_params(m3, "metal", cal)
    assert p.decode_efficiency == pytest.approx(1 / 1.3722, rel=1e-3)
    assert p.per_token_us == pytest.approx(40.0)
    assert (p.decode_confidence, p.driver_measured) == ("low", False)
    # a measured driver keeps its own level
    amd = speed.card_params(card(vendor="AMD", arch="RDNA 3.0"), "vulkan", cal)
    assert amd.decode_efficiency == pytest.approx(0.9)
    assert amd.driver_measured


def test_an_unmeasured_driver_widens_its_range_to_the_held_out_drivers_band() -> None:
    vendors = {"vulkan:amd": LevelParams(0.9, None, 10)}
    cal = replace(CAL, vendors=vendors, decode_bands={**CAL.decode_bands,
                                                      "driver-out": Band(0.4, 1.3)})
    amd, intel = card(vendor="AMD", arch="RDNA 3.0"), card(vendor="Intel", arch="Xe2-HPG")
    known, unknown = speed.decode_estimates(4e9, 0.0, 32, [amd, intel], "vulkan", cal)
    assert known.low / known.tokens_per_s == pytest.approx(0.6)  # the "low" band as it is
    assert known.high / known.tokens_per_s == pytest.approx(1.5)
    assert unknown.low / unknown.tokens_per_s == pytest.approx(0.4)  # widened, never narrowed
    assert unknown.high / unknown.tokens_per_s == pytest.approx(1.5)


def test_a_backend_without_deep_prompts_of_its_own_ranges_its_deep_prompts_up_to_ks_cap() -> None:
    # Vulkan's k is the calibration-wide 0.25 (none of its own): a deep prompt (attention half
    # its FLOPs) keeps its estimate, and its range's top is the speed at k = 1 × the band's top;
    # CUDA's own k = 0.25 leaves the band as it is
    cuda = replace(CAL.backends["cuda"], prefill_attention_efficiency=0.25)
    cal = replace(CAL, backends={**CAL.backends, "cuda": cuda}, prefill_attention_efficiency=0.25)
    gpu = replace(card(), tflops_fp32=25.0)  # a shader rate too, for Vulkan

    def estimate(c: Calibration, backend: str, attention: float) -> speed.PrefillEstimate:
        est = speed.prefill_estimates(2e10, 512, [gpu], backend, c,
                                      attention_flops_per_token=attention)[0]
        assert est is not None
        return est

    deep, at_cap = estimate(cal, "vulkan", 1e10), estimate(
        replace(cal, prefill_attention_efficiency=speed.ATTENTION_EFFICIENCY_CAP), "vulkan", 1e10)
    band = cal.prefill_bands["low"]
    assert deep.tokens_per_s < at_cap.tokens_per_s
    assert deep.high == pytest.approx(at_cap.tokens_per_s * band.high_ratio)
    assert deep.low == pytest.approx(deep.tokens_per_s * band.low_ratio)
    shallow = estimate(cal, "vulkan", 0.0)
    assert shallow.high == pytest.approx(shallow.tokens_per_s * band.high_ratio)
    own = estimate(cal, "cuda", 1e10)
    assert own.high == pytest.approx(own.tokens_per_s * band.high_ratio)


def test_a_moe_on_a_maker_whose_moe_cost_was_never_measured_takes_the_moe_band() -> None:
    # the fit measured NVIDIA's MoE cost (0) and AMD's; Intel had no MoE decode rows
    cal = replace(CAL, moe_matrix_mb={"NVIDIA": 0.0, "AMD": 1.2},
                  decode_bands={**CAL.decode_bands,
                                "condition-out|moe": Band(0.4, 1.6, 50)})
    intel, nvidia = card(vendor="Intel"), card()
    dense_intel, moe_intel, moe_nvidia = (
        speed.decode_estimates(4e9, 0.0, 32, [c], "vulkan", cal, expert_matrices=m)[0]
        for c, m in ((intel, 0.0), (intel, 200.0), (nvidia, 200.0)))
    assert moe_intel.low == pytest.approx(0.4 * moe_intel.tokens_per_s)
    assert moe_intel.high == pytest.approx(1.6 * moe_intel.tokens_per_s)
    assert moe_intel.confidence == dense_intel.confidence == "low"  # never raised to medium
    assert dense_intel.low == pytest.approx(0.6 * dense_intel.tokens_per_s)  # its own band
    assert moe_nvidia.low == pytest.approx(0.6 * moe_nvidia.tokens_per_s)
    # a calibration without the term (moe_matrix_mb empty) widens nothing
    plain = speed.decode_estimates(4e9, 0.0, 32, [intel], "vulkan", replace(
        cal, moe_matrix_mb={}), expert_matrices=200.0)[0]
    assert plain.low == pytest.approx(0.6 * plain.tokens_per_s)


def test_a_moe_cost_fitted_on_one_model_family_leaves_every_moe_on_that_maker_unmeasured() -> None:
    # NVIDIA's cost rests on one family's MoE rows (the device's own among them), AMD's on three
    cal = replace(CAL, moe_matrix_mb={"NVIDIA": 0.0, "AMD": 1.2},
                  moe_matrix_families={"NVIDIA": 1, "AMD": 3},
                  decode_conditions={"cuda:Known GPU": ("moe",)},
                  decode_bands={**CAL.decode_bands,
                                "condition-out|moe": Band(0.4, 1.6, 50)})
    known, amd = card("Known GPU", arch="Ada Lovelace"), card(vendor="AMD")

    def one(c: Card, calib: Calibration, experts: float) -> DecodeEstimate:
        return speed.decode_estimates(4e9, 0.0, 32, [c], "cuda", calib,
                                      expert_matrices=experts)[0]

    moe, dense = one(known, cal, 200.0), one(known, cal, 0.0)
    assert dense.confidence == "high" and dense.low == pytest.approx(0.9 * dense.tokens_per_s)
    assert moe.confidence == "medium"  # its own MoE rows measured one family
    assert moe.low == pytest.approx(0.4 * moe.tokens_per_s)
    assert moe.high == pytest.approx(1.6 * moe.tokens_per_s)
    amd_moe = one(amd, cal, 200.0)
    assert amd_moe.low == pytest.approx(0.6 * amd_moe.tokens_per_s)  # the low level's own band
    # two families measured: the device's own MoE rows stand for any MoE
    two = replace(cal, moe_matrix_families={"NVIDIA": 2, "AMD": 3})
    moe_two = one(known, two, 200.0)
    assert moe_two.confidence == "high"
    assert moe_two.low == pytest.approx(0.9 * moe_two.tokens_per_s)
    # a calibration that does not count the families widens nothing
    uncounted = one(known, replace(cal, moe_matrix_families={}), 200.0)
    assert uncounted.low == pytest.approx(0.9 * uncounted.tokens_per_s)


def _xe2_card_and_calibration() -> tuple[Card, Calibration]:
    """An Intel Xe2 card (XMX 160 TFLOPS, FP32 20) and CAL with Vulkan's XMX factor at 0.2."""
    xe2 = Card(name="Xe2 test card", slug="xe2-test-card", vendor="Intel", memory_gib=24,
               bandwidth_gb_s=500.0, architecture="Xe2-HPG", tflops_fp16_dense=160.0,
               tflops_fp32=20.0)
    vulkan = replace(CAL.backends["vulkan"], prefill_xe2_coopmat_factor=0.2)
    return xe2, replace(CAL, backends={**CAL.backends, "vulkan": vulkan})


def test_xe2_xmx_factor_scales_the_prompt_of_a_tuned_build_only() -> None:
    # An Xe2 card on Vulkan: a current build's prompt GEMMs and attention on the XMX engines at
    # their peak × the fitted factor; a build before PR #18178's tiles at the FP32 rate,
    # without the factor
    xe2, cal = _xe2_card_and_calibration()

    def seconds(c: Calibration, date: str | None, attention: float = 0.0,
                bf16: bool = False) -> float:
        est = speed.prefill_estimates(2e10 + attention, 512, [xe2], "vulkan", c,
                                      quantized=not bf16, attention_flops_per_token=attention,
                                      bf16=bf16, build_date=date)[0]
        assert est is not None
        return 1.0 / est.tokens_per_s

    assert seconds(cal, None) == pytest.approx(seconds(CAL, None) / 0.2)
    assert seconds(cal, "2025-06-04") == pytest.approx(seconds(CAL, "2025-06-04"))
    assert seconds(cal, None, bf16=True) == pytest.approx(seconds(CAL, None, bf16=True))
    # the tuned build's GEMMs: 0.2 × 160 TFLOPS = 32 against the old build's 20
    assert seconds(cal, "2025-06-04") / seconds(cal, None) == pytest.approx(32 / 20)
    assert seconds(cal, None, 2e9) == pytest.approx(seconds(CAL, None, 2e9) / 0.2)
    # the tuned build's attention on the XMX engines (×0.2: 32 TFLOPS), the old build's on the
    # shader ALUs (20): 2e9 attention FLOPs a token cost less than the GEMMs' 2e10 in both
    tuned_att = seconds(cal, None, 2e9) - seconds(cal, None)
    old_att = seconds(cal, "2025-06-04", 2e9) - seconds(cal, "2025-06-04")
    assert tuned_att / old_att == pytest.approx(20 / 32, rel=0.05)


def test_a_backend_borrowing_vulkans_parameters_gets_no_xe2_tiles() -> None:
    # An unfitted SYCL borrows Vulkan's levels (_backend_name), not ggml-vulkan's own Xe2 tile
    # rule: its GEMMs at the FP32 rule's rate, the XMX factor unused
    xe2, cal = _xe2_card_and_calibration()
    sycl, own = speed.card_params(xe2, "sycl", cal), speed.card_params(xe2, "vulkan", cal)
    assert sycl.backend == own.backend == "vulkan" and own.own_kernels and not sycl.own_kernels
    assert speed.gemm_tflops(xe2, own, True) == pytest.approx(0.2 * 160.0)
    assert speed.gemm_tflops(xe2, sycl, True) == pytest.approx(20.0)
    assert speed.gemm_tflops(xe2, own, True, build_date="2025-06-04") == pytest.approx(20.0)
