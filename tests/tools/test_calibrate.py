"""The calibration fit recovers known parameters from synthetic measurements."""
from __future__ import annotations

import json
import math
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

import calibrate
from calibration_data import MAIN_CSV, Obs, era_of, normalise_quant

from tpscalc.catalog.schema import Card
from tpscalc.catalog.slug import slugify
from tpscalc.estimate.calibration import Band, from_dict, measured_key
from tpscalc.estimate.speed_terms import shader_tflops

TRUE = {"cuda": (0.80, 200.0), "metal": (0.70, 900.0)}  # η, overhead per token (µs)
PER_LAYER_US = 40.0  # one per-layer overhead for all backends (tools/calibrate.py)
EPS_TRUE = {"cuda": 0.40, "metal": 0.25}
MODELS = [(4e9, 32), (8e9, 40), (16e9, 60), (36e9, 80)]  # bytes read per token, layers
FLOPS = 1.4e10


def _card(name: str, vendor: str, arch: str, bw: float, tf: float) -> Card:
    return Card(name=name, slug=slugify(name), vendor=vendor, memory_gib=64, bandwidth_gb_s=bw,
                architecture=arch, tflops_fp16_dense=tf)


CARDS = [("cuda", _card(f"G{i}", "NVIDIA", arch, bw, bw / 10))
         for i, (arch, bw) in enumerate([("Ampere", 900), ("Ampere", 600), ("Ada Lovelace", 1000),
                                         ("Ada Lovelace", 300), ("Turing", 450)])]
CARDS += [("metal", _card(f"Apple M{i} (10-core GPU)", "Apple", f"Apple M{i}", bw, bw / 40))
          for i, bw in [(1, 68), (2, 400), (3, 150)]]


def _obs(card: Card, backend: str, kind: str, tps: float, read: float, layers: int) -> Obs:
    return Obs(card=card, backend=backend, model=f"m{layers}", quant="F16", kind=kind,
               test="tg128" if kind == "decode" else "pp512", tokens_per_s=tps, era=2,
               read_bytes=read, kv_bytes=0.0, n_layers=layers, is_moe=False,
               flops_per_token=FLOPS, prompt_tokens=512, quantized=False, source="synthetic",
               size_gib=None, from_main_csv=True, bytes_source="architecture",
               weights_bytes=read, params_total=read / 2, kv_bytes_per_token=0.0)


def synthetic(eta_scale: dict[str, float] | None = None) -> list[Obs]:
    """Exact measurements from the true parameters (η scaled per card name where given)."""
    out = []
    for backend, c in CARDS:
        eta, per_token = TRUE[backend]
        eta *= (eta_scale or {}).get(c.name, 1.0)
        for read, layers in MODELS:
            t = read / (eta * c.bandwidth_gb_s * 1e9) + (per_token + layers * PER_LAYER_US) * 1e-6
            out.append(_obs(c, backend, "decode", 1 / t, read, layers))
        pp = EPS_TRUE[backend] * c.tflops_fp16_dense * 1e12 / FLOPS
        out.append(_obs(c, backend, "prefill", pp, 4e9, 32))
    return out


def test_fit_recovers_backend_parameters() -> None:
    coef, _ = calibrate.fit_decode(synthetic())
    for backend, (eta, per_token) in TRUE.items():
        assert 1 / coef[f"u|{backend}"] == pytest.approx(eta, rel=0.01)
        assert coef[f"a|{backend}"] == pytest.approx(per_token, rel=0.03)
    assert coef["b"] == pytest.approx(PER_LAYER_US, rel=0.03)
    pre, _ = calibrate.fit_prefill(synthetic())
    for backend, eps in EPS_TRUE.items():
        assert pre[f"e|{backend}"] == pytest.approx(__import__("math").log(eps), abs=0.01)


def test_device_offset_recovered_for_known_device() -> None:
    obs = synthetic({"G1": 0.6})  # one card reaches 60 % of its family's η
    cal = calibrate.fit(obs)
    for o in (o for o in obs if o.card.name == "G1" and o.kind == "decode"):
        pred, conf = calibrate.predict(cal, o)
        assert conf == "high"
        assert pred == pytest.approx(o.tokens_per_s, rel=0.05)


def test_left_out_device_gets_family_parameters() -> None:
    rows = calibrate.cross_validate(synthetic(), calibrate.by_device)
    for o, pred, conf in rows:
        assert conf in ("medium", "low")
        assert pred == pytest.approx(o.tokens_per_s, rel=0.03)


def test_json_round_trip_is_exact_and_deterministic() -> None:
    cal = calibrate.calibrate(synthetic(), with_bands=False)
    text = calibrate.to_json(cal)
    assert from_dict(json.loads(text)) == cal
    assert calibrate.to_json(calibrate.calibrate(synthetic(), with_bands=False)) == text


@pytest.mark.parametrize("date, era", [("2023-12", 0), ("2024-05-11", 1), ("", 2), ("2025-11", 2)])
def test_era_of(date: str, era: int) -> None:
    assert era_of(date) == era


def test_normalise_quant() -> None:
    assert normalise_quant("Q4_K - Medium") == "Q4_K_M"
    assert normalise_quant("q8_0") == "Q8_0"


@pytest.mark.slow  # the whole refit: ~4 minutes on 2 cores; CI runs it with `-m slow`
@pytest.mark.skipif(not MAIN_CSV.exists(), reason="shared measured data not present")
def test_committed_calibration_is_up_to_date() -> None:
    """Refitting on the measured data reproduces the committed calibration.json exactly."""
    assert calibrate.main(["--check"]) == 0


def test_fit_prefill_recovers_tensor_share() -> None:
    """Prompt speeds made with w = 0.35 on cards of unlike T/F ratios give back w and ε (the
    share applies to quantized weights unpacked inside the GEMM: a 2025 build's Q4_0 rows)."""
    w, eps = 0.35, 0.4
    obs = []
    for i, (tensor, fp32) in enumerate([(165, 82.6), (312, 19.5), (120, 15), (40, 40), (90, 45)]):
        c = Card(name=f"P{i}", slug=f"p{i}", vendor="NVIDIA", memory_gib=24, bandwidth_gb_s=1000,
                 architecture="Ampere", tflops_fp16_dense=tensor, tflops_fp32=fp32)
        rate = 1 / (w / tensor + (1 - w) / fp32)  # TFLOPS, hand-worked two-term rate
        obs.append(replace(_obs(c, "cuda", "prefill", eps * rate * 1e12 / FLOPS, 4e9, 32),
                           quant="Q4_0", quantized=True))
    coef, _ = calibrate.fit_prefill(obs)
    assert coef["w|cuda"] == pytest.approx(w)
    assert coef["e|cuda"] == pytest.approx(__import__("math").log(eps), abs=0.01)
    cal = calibrate.fit(obs)
    assert cal.backends["cuda"].prefill_tensor_share == pytest.approx(w)
    for o in obs:
        assert calibrate.predict(cal, o)[0] == pytest.approx(o.tokens_per_s, rel=0.01)


def test_main_prompt_fixed_time_recovered() -> None:
    """2023 ./main prompt rows made with a fixed 40 ms per prompt on models of unlike size
    give back that time (it shows within each device, between its small and large models)."""
    eps, fixed_s, n = 0.4, 0.04, 400
    obs = []
    for backend, c in CARDS[:5]:
        rate = eps * c.tflops_fp16_dense * 1e12
        for flops in (1.4e10, 2.6e10, 6.5e10, 1.3e11):
            tps = 1 / (flops / rate + fixed_s / n)
            obs.append(replace(_obs(c, backend, "prefill", tps, 4e9, 32), test="pp_main",
                               main_test=True, prompt_tokens=n, flops_per_token=flops,
                               era=0, date="2023-12"))
        obs.append(replace(_obs(c, backend, "prefill", rate / FLOPS, 4e9, 32)))
    pre, _ = calibrate.fit_prefill(obs)
    assert pre["main_ms|cuda"] == pytest.approx(fixed_s * 1e3)
    cal = calibrate.fit(obs)
    for o in obs:
        assert calibrate.predict(cal, o)[0] == pytest.approx(o.tokens_per_s, rel=0.01)


def test_set_apart_tables_are_out_of_the_fit_and_loaded_alone() -> None:
    from calibration_data import SET_APART, load_observations, main_rows

    from tpscalc.catalog import get_card, get_model

    apart = list(main_rows(get_card, get_model, set_apart=True))
    assert apart and {(o.card.name, o.date) for o in apart} == set(SET_APART)
    fitted = {(o.card.name, o.date) for o in load_observations()}
    assert not fitted & set(SET_APART)
    assert any(name == "Apple M1 Max (24-core GPU)" for name, _ in fitted)


def test_main_prompt_rows_have_their_backends_own_band_else_their_class_and_backends() -> None:
    cal = calibrate.Calibration(backends={}, prefill_bands={
        "medium": calibrate.Band(0.8, 1.2), "medium|main|cuda": calibrate.Band(0.5, 1.5),
        "medium|Apple|metal": calibrate.Band(0.95, 1.05)})
    row = _obs(CARDS[0][1], "cuda", "prefill", 100.0, 4e9, 32)
    main = replace(row, main_test=True)
    assert calibrate.row_band(cal, row, "medium") == calibrate.Band(0.8, 1.2)
    assert calibrate.row_band(cal, main, "medium") == calibrate.Band(0.5, 1.5)
    apple = replace(main, card=CARDS[-1][1], backend="metal")
    assert calibrate.row_band(cal, apple, "medium") == calibrate.Band(0.95, 1.05)


def _fa_pair(card: Card, on_tps: float, gain: float) -> list[Obs]:
    on = replace(_obs(card, "cuda", "prefill", on_tps, 4e9, 32), flash_attn=True)
    return [on, replace(on, flash_attn=False, tokens_per_s=on_tps / gain)]


def test_flash_attention_gain_is_the_median_of_rows_paired_on_everything_else() -> None:
    cards = [c for be, c in CARDS if be == "cuda"]
    obs = [o for c, g in zip(cards, (1.05, 1.10, 1.30)) for o in _fa_pair(c, 1000.0, g)]
    # a row without its pair (another model) and a decode pair say nothing about the gain
    obs.append(replace(obs[0], model="other", tokens_per_s=1.0))
    obs += [replace(o, kind="decode", test="tg128", tokens_per_s=o.tokens_per_s * 7)
            for o in _fa_pair(cards[3], 100.0, 2.0)]
    gain = calibrate.flash_attn_gain(obs)
    assert gain == {"cuda": pytest.approx(math.log(1.10))}
    assert calibrate.flash_attn_gain(obs[:4]) == {}  # two pairs: fewer than FLASH_ATTN_MIN_PAIRS


def test_rows_without_flash_attention_are_fitted_at_the_flash_attention_rate() -> None:
    """Every device measured with -fa 1 and -fa 0 (gain 1.25): ε is the -fa 1 rate and the
    calibration's no-flash-attention factor is 1 / 1.25."""
    obs = synthetic()
    pre = [o for o in obs if o.kind == "prefill" and o.backend == "cuda"]
    for o in pre:
        obs[obs.index(o)] = replace(o, flash_attn=True)
        obs.append(replace(o, flash_attn=False, tokens_per_s=o.tokens_per_s / 1.25))
    be = calibrate.fit(obs).backends["cuda"]
    assert be.prefill_no_flash_attn_factor == pytest.approx(0.8, abs=1e-3)
    assert be.prefill_efficiency == pytest.approx(EPS_TRUE["cuda"], rel=0.02)


def test_streaming_bound_prompt_rows_are_left_out_of_the_prefill_fit() -> None:
    # 60e9 B of weights at 300 GB/s: 0.2 s per micro-batch of 512, at most 2,560 tokens/s
    gpu = _card("Slow memory GPU", "NVIDIA", "Ampere", 300, 100)
    near = _obs(gpu, "cuda", "prefill", 2000.0, 60e9, 36)  # 78 % of the bound
    far = _obs(gpu, "cuda", "prefill", 1000.0, 60e9, 36)  # 39 %
    assert calibrate._streaming_bound(near) and not calibrate._streaming_bound(far)


def test_one_odd_row_moves_the_shared_terms_less_than_plain_least_squares(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Huber weights: a row three times too slow (a throttled or mislabelled run) moves the
    backend's η and per-token cost less than it does in the plain weighted fit."""
    obs = synthetic()
    odd = next(o for o in obs if o.card.name == "G0" and o.kind == "decode")
    obs[obs.index(odd)] = replace(odd, tokens_per_s=odd.tokens_per_s / 3)
    eta, per_token = TRUE["cuda"]

    def errors() -> tuple[float, float]:
        coef, _ = calibrate.fit_decode(obs)
        return abs(1 / coef["u|cuda"] / eta - 1), abs(coef["a|cuda"] / per_token - 1)

    robust = errors()
    monkeypatch.setattr(calibrate, "HUBER_ITERATIONS", 0)
    plain = errors()
    assert robust[0] < plain[0] and robust[1] < plain[1]
    assert robust[0] < 0.02


def test_scoreboard_rows_are_device_and_model_pairs_no_calibration_table_holds() -> None:
    from calibration_data import SCOREBOARD_DEVICES, load_observations

    obs = load_observations()
    board = [o for o in obs if o.scoreboard]
    others = {(o.card.name, o.model) for o in obs if not o.scoreboard}
    assert {o.card.name for o in board} == set(SCOREBOARD_DEVICES.values())
    assert not others & {(o.card.name, o.model) for o in board}
    assert {(o.test, o.flash_attn) for o in board} == {
        (t, fa) for t in ("pp512", "tg128") for fa in (False, True)}


def test_a_high_band_is_never_wider_than_the_medium_one() -> None:
    b = calibrate.Band
    bands = {"high|X|cuda": b(0.4, 1.5, 27), "medium|X|cuda": b(0.8, 1.2, 100),
             "low|X|cuda": b(0.7, 1.3, 60), "high": b(0.9, 1.1, 9), "medium": b(0.5, 2.0, 9),
             "low": b(0.6, 1.5, 9)}
    out = calibrate._cap_high_bands(bands)
    assert out["high|X|cuda"] == b(0.8, 1.2, 27)  # the medium band, its own row count
    assert out["medium|X|cuda"] == bands["medium|X|cuda"]  # already narrower than low's
    assert out["medium"] == bands["medium"]  # wider than low's, as measured
    assert out["high"] == bands["high"]


def test_a_band_is_the_split_conformal_range_counted_in_devices() -> None:
    ratios = [float(r) for r in np.linspace(0.5, 1.5, 40)]
    many = calibrate._band_of([(f"d{i}", r) for i, r in enumerate(ratios)])
    level = (1 + calibrate.BAND_COVERAGE) / 2 * (1 + 1 / 40)  # 40 devices, one row each
    assert many.low_ratio == pytest.approx(np.quantile(ratios, 1 - level), abs=1e-3)
    assert many.high_ratio == pytest.approx(np.quantile(ratios, level), abs=1e-3)
    assert many.n == 40
    # the same 40 rows from three devices: as little known as three rows, the extremes
    few = calibrate._band_of([(f"d{i % 3}", r) for i, r in enumerate(ratios)])
    assert (few.low_ratio, few.high_ratio, few.n) == (0.5, 1.5, 40)
    # a range always holds the estimate itself
    assert calibrate._band_of([(f"d{i}", 1.1 + i / 100) for i in range(30)]).low_ratio == 1.0


def test_a_class_pool_needs_its_devices_for_a_band_of_its_own() -> None:
    ratios = {("prefill", "medium"): [(f"d{i}", 0.9 + i / 100) for i in range(20)],
              ("decode", "medium"): [(f"d{i}", 0.9 + i / 100) for i in range(20)],
              ("prefill", "medium|X|cuda"): [("a", 0.5), ("b", 1.6)] * 20,
              ("prefill", "medium|Y|cuda"): [("a", 0.7), ("b", 1.3), ("c", 1.0)]}
    _, pre = calibrate.bands_from_ratios(ratios)
    assert calibrate.BAND_MIN_DEVICES == 3
    assert "medium|X|cuda" not in pre  # 40 rows, two devices
    assert (pre["medium|Y|cuda"].low_ratio, pre["medium|Y|cuda"].high_ratio) == (0.7, 1.3)


def test_a_class_pool_of_fewer_than_nine_devices_is_joined_with_the_next_pool() -> None:
    # three held-out HBM devices all ran above their estimate: their extremes hold half of a
    # fourth device's rows ((m - 1) / (m + 1)), so their band keeps the backend's as well;
    # twenty GDDR devices set their own
    hbm = [(f"h{i}", r) for i, r in enumerate((1.02, 1.15, 1.27))]
    gddr = [(f"g{i}", 0.8 + i / 50) for i in range(20)]
    ratios = {("prefill", "medium"): hbm + gddr, ("prefill", "medium|cuda"): hbm + gddr,
              ("prefill", "medium|datacenter HBM|cuda"): hbm,
              ("prefill", "medium|consumer GDDR|cuda"): gddr,
              ("prefill", "medium|datacenter HBM"): hbm}
    _, pre = calibrate.bands_from_ratios(ratios)
    assert calibrate.CONFORMAL_MIN_DEVICES == 9
    backend, level = pre["medium|cuda"], pre["medium"]
    assert backend.low_ratio < 0.85 and backend.high_ratio < 1.27
    assert pre["medium|datacenter HBM|cuda"] == calibrate.Band(backend.low_ratio, 1.27, 3)
    assert pre["medium|datacenter HBM"] == calibrate.Band(level.low_ratio, 1.27, 3)  # the level's
    assert pre["medium|consumer GDDR|cuda"] == calibrate._band_of(gddr)


def test_moe_prompts_pool_apart_and_take_the_moe_band() -> None:
    dense = _obs(CARDS[0][1], "cuda", "prefill", 100.0, 4e9, 32)
    moe = replace(dense, is_moe=True, expert_params=1e9, model="moe")
    pools = calibrate.pool_ratios([(dense, 100.0, "medium"), (moe, 50.0, "medium")])
    assert pools[("prefill", "medium|moe")] == [(dense.card.name, 2.0)]
    assert pools[("prefill", "medium")] == [(dense.card.name, 1.0), (dense.card.name, 2.0)]
    cls = next(k for _, k in pools if k.count("|") == 2)
    assert pools[("prefill", cls)] == [(dense.card.name, 1.0)]  # the class pools: dense only
    assert pools[("prefill", "medium|cuda")] == [(dense.card.name, 1.0)]  # the backend's too
    cal = replace(calibrate.calibrate(synthetic(), with_bands=False), prefill_bands={
        "low": calibrate.Band(0.8, 1.2), "high": calibrate.Band(0.9, 1.1),
        "medium": calibrate.Band(0.85, 1.15), "high|moe": calibrate.Band(0.5, 2.0)})
    assert calibrate.row_band(cal, moe, "high") == calibrate.Band(0.5, 2.0)
    assert calibrate.row_band(cal, dense, "high") == calibrate.Band(0.9, 1.1)
    # the engine: per row, a MoE's prompt the MoE band (the device is measured: high)
    est = calibrate.speed.prefill_estimates([FLOPS, FLOPS], 512, [dense.card, dense.card],
                                            "cuda", cal, expert_params=[0.0, 1e9])
    assert [round(e.high / e.tokens_per_s, 3) for e in est if e] == [1.1, 2.0]


def test_a_unified_memory_chips_prompts_fit_a_family_of_their_own() -> None:
    soc = replace(_card("SoC", "NVIDIA", "Ampere", 273, 27.3), unified_memory=True)
    obs = synthetic() + [replace(o, card=soc) for o in synthetic() if o.card.name == "G0"]
    cal = calibrate.calibrate(obs, with_bands=False)
    assert cal.families["cuda:ampere+unified"].prefill_efficiency is not None
    assert cal.families["cuda:ampere+unified"].decode_efficiency is None
    assert cal.families["cuda:ampere"].decode_efficiency is not None
    # the chip's decode rows count toward its architecture's family, its prompts do not
    soc_rows = [o for o in obs if o.card is soc]
    assert cal.families["cuda:ampere"].n_measurements == sum(
        o.card.architecture == "Ampere" for o in synthetic()) + sum(
        o.kind == "decode" for o in soc_rows)
    assert cal.families["cuda:ampere+unified"].n_measurements == sum(
        o.kind == "prefill" for o in soc_rows)



def test_the_decode_fit_takes_the_dequantization_work_from_the_kernels() -> None:
    """Rows whose time holds the kernels' counted work (speed_terms.KERNEL_DEQUANT_OPS) give
    back each backend's η and overheads exactly, with no work term fitted beside them: the
    bandwidth term has nothing to trade against."""
    shaded = {c.name: replace(c, tflops_fp32=c.tflops_fp16_dense / 40) for _, c in CARDS}
    obs = []
    for o in synthetic():
        if o.kind != "decode":
            continue
        card, quant = shaded[o.card.name], ("Q4_K_M", "Q8_0")[o.n_layers % 2]
        work_s = (calibrate.speed.dequant_work(card, o.backend, calibrate.KERNELS_ONLY, quant)
                  * o.read_bytes / 0.6 / (card.tflops_fp32 * 1e12))
        obs.append(replace(o, card=card, quant=quant, params_read=o.read_bytes / 0.6,
                           tokens_per_s=1 / (1 / o.tokens_per_s + work_s)))
    coef, _ = calibrate.fit_decode(obs)
    assert not [n for n in coef if n.startswith("dq|")]
    for backend, (eta, per_token) in TRUE.items():
        assert 1 / coef[f"u|{backend}"] == pytest.approx(eta, rel=0.01)
        assert coef[f"a|{backend}"] == pytest.approx(per_token, rel=0.03)
    assert calibrate.fit(obs).dequant_flops_per_weight == {}


VULKAN_ETA = {"AMD": 0.85, "Intel": 0.50}  # the driver's share of the bandwidth
VULKAN_CARDS = [_card(f"V{i}", vendor, arch, bw, bw / 20) for i, (vendor, arch, bw) in enumerate(
    [("AMD", "RDNA 3.0", 900), ("AMD", "RDNA 2.0", 500), ("AMD", "RDNA 4.0", 600),
     ("Intel", "Xe2-HPG", 450), ("Intel", "Xe-HPG", 500), ("Intel", "Xe2-HPG", 600)])]


INTEL_MOE_MB = 2.0  # what each routed expert matrix costs beyond its bytes on Intel's chips


def _expert_matrices(layers: int) -> float:
    return layers * 8.0 * 3.0  # 8 gated experts per token in every layer


def vulkan_synthetic() -> list[Obs]:
    """Vulkan decode rows of two vendors' drivers: Intel's MoE rows also read INTEL_MOE_MB per
    routed expert matrix at the card's bandwidth."""
    out = []
    for c in VULKAN_CARDS:
        eta = VULKAN_ETA[c.vendor]
        for read, layers in MODELS:
            for moe in (False, True) if c.vendor == "Intel" else (False,):
                n = _expert_matrices(layers) if moe else 0.0
                mem = (read / eta + n * INTEL_MOE_MB * 1e6) / (c.bandwidth_gb_s * 1e9)
                t = mem + layers * PER_LAYER_US * 1e-6
                out.append(replace(_obs(c, "vulkan", "decode", 1 / t, read, layers),
                                   is_moe=moe, expert_matrices=n,
                                   model=f"m{layers}{'moe' if moe else ''}"))
    return out


def test_vendor_level_carries_a_drivers_efficiency_and_moe_cost_to_an_unmeasured_card() -> None:
    obs = vulkan_synthetic()
    left_out = "V2"  # an AMD card of an architecture the fit never saw
    cal = calibrate.fit([o for o in obs if o.card.name != left_out])
    assert cal.moe_matrix_mb["Intel"] == pytest.approx(INTEL_MOE_MB, rel=0.1)
    assert "AMD" not in cal.moe_matrix_mb  # no AMD MoE row
    assert cal.moe_matrix_families == {"Intel": len(MODELS)}  # each MoE model a family
    for o in (o for o in obs if o.card.name == left_out):
        pred, conf = calibrate.predict(cal, o)
        assert conf == "low"
        assert pred == pytest.approx(o.tokens_per_s, rel=0.1)
        pooled, _ = calibrate.predict(replace(cal, vendors={}), o)  # the backend's η alone
        assert pooled < 0.8 * o.tokens_per_s
        moe, _ = calibrate.predict(cal, replace(o, is_moe=True,
                                                expert_matrices=_expert_matrices(o.n_layers)))
        assert moe == pytest.approx(pred, rel=0.01)  # Intel's MoE cost is not AMD's


def test_a_chip_makers_moe_cost_follows_its_chips_under_another_backend() -> None:
    obs = vulkan_synthetic()
    cal = calibrate.fit([o for o in obs if o.card.name != "V5"])
    for o in (o for o in obs if o.card.name == "V5" and o.is_moe):  # an Intel card left out
        sycl = replace(o, backend="sycl")  # an unfitted backend: Vulkan's pooled level
        dense, _ = calibrate.predict(cal, replace(sycl, is_moe=False, expert_matrices=0.0))
        on_sycl, _ = calibrate.predict(cal, sycl)
        extra_s = o.expert_matrices * INTEL_MOE_MB * 1e6 / (o.card.bandwidth_gb_s * 1e9)
        assert 1 / on_sycl - 1 / dense == pytest.approx(extra_s, rel=0.1)


def test_vulkans_bf16_expert_tiles_get_a_fitted_share_of_the_shader_rate() -> None:
    """AMD Vulkan cards whose BF16 MoE rows also compute their experts' 32-column tiles at 1/4
    of the shader rate: the fit recovers the factor 4 beside η, and predicts the rows."""
    factor = 4.0
    out = []
    for c in (replace(c, tflops_fp32=20.0) for c in VULKAN_CARDS if c.vendor == "AMD"):
        eta, shader = VULKAN_ETA["AMD"], shader_tflops(c)  # RDNA 3-4's dual issue halved
        assert shader
        for read, layers in MODELS:
            experts = read / 8  # BF16 routed expert parameters per token (2 bytes each)
            for bf16 in (False, True):
                t = read / (eta * c.bandwidth_gb_s * 1e9) + layers * PER_LAYER_US * 1e-6
                if bf16:
                    t += 2 * experts * 32 * factor / (shader * 1e12)
                out.append(replace(_obs(c, "vulkan", "decode", 1 / t, read, layers),
                                   quant="BF16" if bf16 else "F16", is_moe=True,
                                   expert_params=experts, model=f"m{layers}{bf16}"))
    cal = calibrate.fit(out)
    assert cal.decode_expert_gemm_factor == pytest.approx(factor, rel=0.02)
    for o in out:
        assert calibrate.predict(cal, o)[0] == pytest.approx(o.tokens_per_s, rel=0.02)
    # without BF16 MoE rows there is no term: nothing charged
    assert calibrate.fit([o for o in out if o.quant == "F16"]).decode_expert_gemm_factor == 0.0


def test_a_backends_level_is_its_measured_drivers_pooled() -> None:
    # The Vulkan backend's η is the row-weighted mean of its vendors' 1/η, not the bare shared
    # term, which is no driver's level once the vendors split it.
    obs = [o for o in vulkan_synthetic() if not o.is_moe]
    cal = calibrate.fit(obs)
    rows = {v: sum(o.card.vendor == v for o in obs) for v in VULKAN_ETA}
    u = sum(n / cal.vendors[f"vulkan:{v.lower()}"].decode_efficiency
            for v, n in rows.items()) / len(obs)
    assert cal.backends["vulkan"].decode_efficiency == pytest.approx(1 / u, rel=1e-3)
    assert 0.5 < cal.backends["vulkan"].decode_efficiency < 0.85


def test_a_fit_without_a_backend_predicts_it_from_the_pooled_drivers() -> None:
    # Every Metal row held out: the Apple chips take the pooled level of the CUDA and Vulkan
    # drivers (0.8, 0.85, 0.5 here), not the Vulkan backend's, and a range widened by the
    # held-out drivers' band.
    obs = [replace(o, source=f"github.com/{o.card.name}/bench")  # one publication per card
           for o in [o for o in synthetic() if o.kind == "decode"] + vulkan_synthetic()]
    cal = calibrate.calibrate([o for o in obs if o.backend != "metal"])
    assert "driver-out" in cal.decode_bands
    apple = next(o for o in obs if o.backend == "metal")
    p = calibrate.speed.card_params(apple.card, "metal", cal)
    pooled = [o for o in obs if o.backend != "metal"]
    u = np.mean([1 / (TRUE["cuda"][0] if o.backend == "cuda" else VULKAN_ETA[o.card.vendor])
                 for o in pooled])
    assert p.decode_efficiency == pytest.approx(1 / u, rel=0.05)
    band = calibrate.row_band(cal, apple, "low")
    assert band.low_ratio <= cal.decode_bands["driver-out"].low_ratio
    assert band.high_ratio >= cal.decode_bands["driver-out"].high_ratio


def test_a_driver_seen_on_one_device_is_that_devices_level_not_its_drivers() -> None:
    # One Mac's rows kept, at 45 % of the Metal level (as one odd MoE row of an M2 Ultra set
    # every Mac's η when the Apple table was held out): that Mac keeps its own level, but the
    # other Macs take the measured drivers' pooled level and the unmeasured driver's range.
    obs = [o for o in synthetic({"Apple M2 (10-core GPU)": 0.45}) if o.kind == "decode"]
    obs += vulkan_synthetic()
    odd = [o for o in obs if o.card.name == "Apple M2 (10-core GPU)"]
    cal = calibrate.fit([o for o in obs if o.backend != "metal"] + odd)
    assert "metal:apple" not in cal.vendors
    for o in odd:
        assert calibrate.predict(cal, o)[0] == pytest.approx(o.tokens_per_s, rel=0.05)
    other = next(o for o in obs if o.card.name == "Apple M3 (10-core GPU)")
    p = calibrate.speed.card_params(other.card, "metal", cal)
    assert not p.driver_measured
    pooled = [o for o in obs if o.backend != "metal"]
    u = np.mean([1 / (TRUE["cuda"][0] if o.backend == "cuda" else VULKAN_ETA[o.card.vendor])
                 for o in pooled])
    assert p.decode_efficiency == pytest.approx(1 / u, rel=0.05)
    both = calibrate.fit([o for o in obs if o.backend != "metal"] + odd
                         + [o for o in obs if o.card.name == "Apple M3 (10-core GPU)"])
    assert "metal:apple" in both.vendors  # two Macs: a driver level of its own


def test_decode_rows_pool_per_backend_where_three_devices_stand_behind_it() -> None:
    # Vulkan's held-out devices miss wider than CUDA's: each backend's decode pool gets its own
    # band, and a backend of fewer than three devices keeps the level's.
    rows = [(replace(_obs(CARDS[i % 5][1], be, "decode", 100.0 * r, 4e9, 32),
                     card=replace(CARDS[i % 5][1], name=f"{be}{i % n}")), 100.0, "low")
            for be, n, spread in (("vulkan", 4, (0.5, 1.6)), ("cuda", 4, (0.95, 1.05)),
                                  ("rocm", 2, (0.2, 3.0)))
            for i, r in enumerate(np.linspace(*spread, 20))]
    dec, _ = calibrate.bands_from_ratios(calibrate.pool_ratios(rows))
    assert dec["low|vulkan"].low_ratio < 0.6 and dec["low|vulkan"].high_ratio > 1.5
    assert dec["low|cuda"].high_ratio / dec["low|cuda"].low_ratio < 1.15
    assert "low|rocm" not in dec  # two devices
    cal = calibrate.Calibration(backends={}, decode_bands=dec)
    assert calibrate.speed.decode_band(cal, "low", backend="cuda") == dec["low|cuda"]
    assert calibrate.speed.decode_band(cal, "low", backend="rocm") == dec["low"]


def test_decode_rows_pool_per_device_class_and_backend_where_three_devices_stand_behind_it(
        ) -> None:
    # HBM cards' held-out decode scatters wider than GDDR cards' under the same backend (its
    # class offset rests on few devices): a class with three devices under a backend gets its
    # own band (joined with the backend's below nine devices); a class with fewer takes the
    # backend's.
    hbm = replace(CARDS[0][1], memory_type="HBM2e")
    rows = [(replace(_obs(c, "cuda", "decode", 100.0 * r, 4e9, 32),
                     card=replace(c, name=f"{tag}{i % n}")), 100.0, "medium")
            for tag, c, n, spread in (("hbm", hbm, 3, (0.65, 1.25)),
                                      ("gddr", CARDS[1][1], 9, (0.9, 1.1)),
                                      ("uni", replace(CARDS[2][1], memory_type="LPDDR5X"), 2,
                                       (0.3, 3.0)))
            for i, r in enumerate(np.linspace(*spread, 20))]
    dec, _ = calibrate.bands_from_ratios(calibrate.pool_ratios(rows))
    hbm_band = dec["medium|datacenter HBM|cuda"]
    assert hbm_band.low_ratio < 0.7 and hbm_band.high_ratio > 1.2
    assert dec["medium|consumer GDDR|cuda"].high_ratio < 1.11
    assert "medium|iGPU / unified|cuda" not in dec  # two devices
    cal = calibrate.Calibration(backends={}, decode_bands=dec)
    assert calibrate.speed.decode_band(cal, "medium", backend="cuda", card=hbm) == hbm_band
    uni = replace(CARDS[2][1], memory_type="LPDDR5X")
    assert calibrate.speed.decode_band(cal, "medium", backend="cuda", card=uni) == dec[
        "medium|cuda"]


EXPERT_PHI = 0.7  # the share of the dense GEMMs' rate the synthetic expert GEMMs reach


def test_the_expert_gemms_share_of_the_dense_rate_is_recovered_per_backend() -> None:
    # MoE prompts on every CUDA card: 1e9 of the 1.4e10 FLOPs a token are a 5e8-parameter
    # expert's (whole tiles: 1e5 rows each), run at EXPERT_PHI of the dense rate
    obs = synthetic()
    for backend, c in CARDS:
        if backend == "cuda":
            t = (FLOPS + 1e9 * (1 / EXPERT_PHI - 1)) / (
                EPS_TRUE[backend] * c.tflops_fp16_dense * 1e12)
            obs.append(replace(_obs(c, backend, "prefill", 1 / t, 4e9, 32), model="moe",
                               is_moe=True, expert_params=5e8, expert_batch=1e5))
    pre, _ = calibrate.fit_prefill(obs)
    assert pre["phi|cuda"] == EXPERT_PHI
    cal = calibrate.fit(obs)
    assert cal.backends["cuda"].prefill_expert_gemm_efficiency == EXPERT_PHI
    for o in obs:
        if o.kind == "prefill" and o.backend == "cuda":
            assert calibrate.predict(cal, o)[0] == pytest.approx(o.tokens_per_s, rel=0.02)
    # a backend without MoE prompts on two devices takes the one chosen for all
    assert pre["phi|metal"] == pre["phi"]


EXPERT_GEMM_US = 20.0  # the fixed time of one synthetic expert GEMM, µs


def test_a_fixed_time_per_expert_gemm_is_recovered_where_llama_cpp_loops_over_experts() -> None:
    # F16 MoE prompts on the synthetic CUDA cards, which carry no tensor-core rate of their own
    # (no MMF for them: one cuBLAS GEMM per expert): 30 expert GEMMs a token at EXPERT_GEMM_US
    # each beside the FLOPs' time; the same prompts quantized (MMQ, one kernel) pay none
    obs = synthetic()
    for backend, c in CARDS:
        if backend == "cuda":
            flops_s = FLOPS / (EPS_TRUE[backend] * c.tflops_fp16_dense * 1e12)
            moe = replace(_obs(c, backend, "prefill", 1.0, 4e9, 32), model="moe", is_moe=True,
                          expert_params=5e8, expert_batch=1e5, expert_gemms=30.0)
            obs.append(replace(moe, tokens_per_s=1 / (flops_s + 30 * EXPERT_GEMM_US * 1e-6)))
    pre, _ = calibrate.fit_prefill(obs)
    assert pre["moe_gemm_us"] == EXPERT_GEMM_US
    cal = calibrate.fit(obs)
    assert cal.moe_expert_gemm_us == EXPERT_GEMM_US
    for o in obs:
        if o.kind == "prefill" and o.backend == "cuda":
            assert calibrate.predict(cal, o)[0] == pytest.approx(o.tokens_per_s, rel=0.02)
    # the same rows as quantized experts (MMQ: one kernel) are not charged it, whatever they
    # took: the fit cannot tell it, and keeps the dispatch-latency prior for the looped
    # prompts it predicts (a held-out ROCm device's BF16 experts)
    quantized = [replace(o, quantized=True, quant="Q8_0") if o.is_moe else o for o in obs]
    assert calibrate.fit_prefill(quantized)[0]["moe_gemm_us"] == calibrate.MOE_GEMM_US_PRIOR
    looped_out = calibrate.fit(quantized)
    assert looped_out.moe_expert_gemm_us == calibrate.MOE_GEMM_US_PRIOR
    f16 = next(o for o in obs if o.is_moe)
    assert calibrate.predict(looped_out, f16)[0] < calibrate.predict(
        replace(looped_out, moe_expert_gemm_us=0.0), f16)[0]


DEEP_SLOWDOWN = 0.7  # the synthetic deep rows run at this share of what the fit predicts


def _with_deep_rows(names: set[str]) -> list[Obs]:
    """synthetic() with, on the CUDA cards named, decode rows at depth 32k that run at
    DEEP_SLOWDOWN of their shallow speed (a cost no term of the fit carries)."""
    obs = synthetic()
    for o in list(obs):
        if o.kind == "decode" and o.card.name in names:
            obs.append(replace(o, test="tg128@d32768", depth=32768,
                               tokens_per_s=o.tokens_per_s * DEEP_SLOWDOWN))
    return obs


def test_a_measured_devices_range_widens_for_a_condition_none_of_its_rows_hold() -> None:
    # Three cards measured deep as well as shallow: each one's deep rows, held out while its
    # shallow rows stay, run at DEEP_SLOWDOWN of the fit's prediction, and that is the
    # "condition-out|deep" band. A measured card with no deep row takes it for a deep decode,
    # not for a shallow one; a card measured deep keeps its own range.
    deep_cards = {"G0", "G1", "G2"}
    obs = _with_deep_rows(deep_cards)
    ratios = calibrate.condition_ratios(obs)
    held = ratios[("decode", "condition-out|deep")]
    assert {d for d, _ in held} == deep_cards
    assert ("decode", "condition-out|moe") not in ratios  # no device has MoE decode rows
    band = calibrate.bands_from_ratios(ratios)[0]["condition-out|deep"]
    assert band.low_ratio < DEEP_SLOWDOWN * 1.05
    cal = replace(calibrate.fit(obs), decode_conditions=calibrate.held_conditions(obs, "decode"),
                  decode_bands={"high": Band(0.9, 1.1), "condition-out|deep": band})
    assert cal.decode_conditions["cuda:G0"] == ("deep",)
    assert cal.decode_conditions["cuda:G3"] == ()
    shallow = next(o for o in obs if o.card.name == "G3" and o.kind == "decode")
    deep = replace(shallow, depth=32768)
    plain = calibrate.row_band(cal, shallow, "high")
    assert calibrate.row_band(cal, deep, "high").low_ratio == band.low_ratio < plain.low_ratio
    measured_deep = next(o for o in obs if o.card.name == "G0" and o.depth)
    assert calibrate.row_band(cal, measured_deep, "high") == plain
    # the engine's decode of that deep row on G3 holds the band too, its estimate unchanged
    wide, narrow = (calibrate.speed.decode_estimates(
        o.read_bytes, o.kv_bytes, o.n_layers, [o.card], "cuda", cal, depth_tokens=o.depth)[0]
        for o in (deep, shallow))
    assert wide.tokens_per_s == narrow.tokens_per_s
    assert wide.low == pytest.approx(wide.tokens_per_s * band.low_ratio)
    assert narrow.low == pytest.approx(narrow.tokens_per_s * plain.low_ratio)
    assert (wide.confidence, narrow.confidence) == ("medium", "high")  # the label follows


def test_a_measured_devices_prompt_range_widens_for_a_condition_none_of_its_prompts_hold(
        ) -> None:
    # Three cards with prompts at depth 32k as well as shallow ones, each deep prompt running at
    # its own share of the shallow rate: held out while its shallow prompts stay, each misses by
    # that share, and the spread is the prompt "condition-out|deep" band. A measured card with
    # no deep prompt takes it for a prompt whose mean context is >= 16k, not for a shallow one
    # (nor for a deep decode: a decode band is the decode's), and its estimate is unchanged.
    obs = synthetic()
    shares = {"G0": 0.5, "G1": 0.8, "G2": 1.1}
    for o in list(obs):
        if o.kind == "prefill" and o.card.name in shares:
            obs.append(replace(o, test="pp512@d32768", depth=32768,
                               tokens_per_s=o.tokens_per_s * shares[o.card.name]))
    ratios = calibrate.condition_ratios(obs)
    held = ratios[("prefill", "condition-out|deep")]
    assert {d for d, _ in held} == set(shares)
    assert ("decode", "condition-out|deep") not in ratios  # no decode row is deep
    band = calibrate.bands_from_ratios(ratios)[1]["condition-out|deep"]
    assert band.low_ratio < 0.8 and band.high_ratio > 1.1  # the shares about their mean
    cal = replace(calibrate.fit(obs), prefill_conditions=calibrate.held_conditions(obs, "prefill"),
                  prefill_bands={"high": Band(0.9, 1.1), "condition-out|deep": band})
    assert cal.prefill_conditions["cuda:G0"] == ("deep",)
    assert cal.prefill_conditions["cuda:G3"] == ()
    shallow = next(o for o in obs if o.card.name == "G3" and o.kind == "prefill")
    assert calibrate.predict(cal, shallow)[1] == "high"
    deep = replace(shallow, depth=32768)
    plain = calibrate.row_band(cal, shallow, "high")
    assert plain == Band(0.9, 1.1)
    assert calibrate.row_band(cal, deep, "high") == calibrate.union(plain, band)
    measured_deep = next(o for o in obs if o.card.name == "G0" and o.depth)
    assert calibrate.row_band(cal, measured_deep, "high") == plain
    # the engine: the range of G3's prompt at a mean context of 16k or more holds the band
    wide, narrow = (calibrate.speed.prefill_estimates(
        shallow.flops_per_token, 512, [shallow.card], "cuda", cal,
        context_tokens=context)[0] for context in (calibrate.speed.DEEP_TOKENS, 16000))
    assert wide is not None and narrow is not None
    assert wide.tokens_per_s == narrow.tokens_per_s
    assert wide.low == pytest.approx(wide.tokens_per_s * band.low_ratio)
    assert wide.high == pytest.approx(wide.tokens_per_s * band.high_ratio)
    assert narrow.low == pytest.approx(narrow.tokens_per_s * 0.9)


def test_measured_table_holds_every_tables_default_tests_on_an_empty_cache() -> None:
    # a row of another table (not the main one, not the scoreboard): held at llama-bench's
    # default tests with no depth, not at a depth or another test
    base = replace(_obs(CARDS[0][1], "cuda", "decode", 50.0, 4e9, 32), from_main_csv=False,
                   scoreboard=False, model="extra", source="a benchmark repository")
    rows = [base, replace(base, kind="prefill", test="pp512", tokens_per_s=900.0),
            replace(base, test="tg32 @ d32768", depth=32768, tokens_per_s=30.0),
            replace(base, test="tg32", tokens_per_s=55.0)]
    held = calibrate.measured_table(rows)[measured_key(CARDS[0][1].name, "extra", "F16")]
    assert sorted((m.kind, m.test, m.tokens_per_s) for m in held) == [
        ("decode", "tg128", 50.0), ("prefill", "pp512", 900.0)]
    assert all(m.source == "a benchmark repository" for m in held)


def test_rocms_attention_on_the_matrix_units_gets_an_efficiency_of_its_own() -> None:
    """ROCm runs a prompt's attention in two kernels (speed_terms.splits_attention): the
    tile kernel on the shader ALUs and, for some head shapes, RDNA's WMMA. Rows made by the
    engine with k = 0.7 for the first and 0.35 for the second give back both, each where its
    own rows are; without WMMA rows at depth the backend has no km (its k stands in)."""
    from tpscalc.estimate.calibration import BackendParams, Calibration

    cards = [_card(f"R{i}", "AMD", arch, bw, tf) for i, (arch, bw, tf) in enumerate(
        [("RDNA 3.0", 960, 122.8), ("RDNA 3.5", 256, 59.4), ("RDNA 4.0", 640, 191.4)])]
    cards = [replace(c, tflops_fp32=c.tflops_fp16_dense / (4 if c.architecture == "RDNA 4.0"
                                                           else 2)) for c in cards]
    true = Calibration(backends={"rocm": BackendParams(
        0.8, 0.0, 40.0, 0.45, prefill_tensor_share=1.0, prefill_attention_efficiency=0.7,
        prefill_matrix_attention_efficiency=0.35)}, prefill_attention_efficiency=0.7)
    obs = []
    for c in cards:
        for depth in (0, 4096, 16384, 32768):
            attn = 4.0 * 32 * 4096 * (depth + 256)  # layers x heads·dim x 2 matmuls x context
            for wmma in (False, True):
                row = replace(_obs(c, "rocm", "prefill", 1.0, 4e9, 32), depth=depth,
                              test=f"pp512 @ d{depth}", flash_attn=True, attn_flops=attn,
                              flops_per_token=FLOPS + attn, wmma_shape=wmma,
                              model=f"m{int(wmma)}", date="2026-09-01")
                obs.append(replace(row, tokens_per_s=calibrate.predict(true, row)[0]))
    pre, _ = calibrate.fit_prefill(obs)
    assert (pre["k|rocm"], pre["km|rocm"]) == (0.7, 0.35)
    tile_only = [o for o in obs if not o.wmma_shape]
    assert "km|rocm" not in calibrate.fit_prefill(tile_only)[0]


def _with_kernel_rate(rate_gb_s: float) -> list[Obs]:
    """synthetic()'s CUDA rows read at 1/bandwidth + 1/R per byte (each × 1/η): a driver whose
    kernels cap the read rate (Intel's Arc under Vulkan, speed.kernel_rate_share)."""
    eta, per_token = TRUE["cuda"]
    out = [o for o in synthetic() if o.backend != "cuda" or o.kind != "decode"]
    for backend, c in CARDS:
        if backend != "cuda":
            continue
        for read, layers in MODELS:
            t = (read / (eta * 1e9) * (1 / c.bandwidth_gb_s + 1 / rate_gb_s)
                 + (per_token + layers * PER_LAYER_US) * 1e-6)
            out.append(_obs(c, backend, "decode", 1 / t, read, layers))
    return out


def test_a_driver_kernel_rate_is_found_where_the_devices_show_one() -> None:
    obs = _with_kernel_rate(250.0)
    dec_obs = [o for o in obs if o.kind == "decode"]
    rates, _ = calibrate.kernel_rates(dec_obs)
    assert rates["cuda:nvidia"] == pytest.approx(250.0, rel=0.1)
    # and a device held out is predicted from the others through it
    held = "G0"  # 900 GB/s, read at ~195 GB/s
    cal = calibrate.fit([o for o in obs if o.card.name != held])
    assert cal.decode_kernel_rate_gb_s
    errs = [calibrate.predict(cal, o)[0] / o.tokens_per_s - 1
            for o in dec_obs if o.card.name == held]
    assert max(abs(e) for e in errs) < 0.05


def test_no_kernel_rate_where_the_bandwidth_sets_the_time() -> None:
    obs = [o for o in synthetic() if o.kind == "decode"]
    assert calibrate.kernel_rates(obs)[0] == {}
