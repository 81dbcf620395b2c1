"""The CPU's share of a token (estimate/cpu_speed.py): which limit binds, and that naming the
CPU only ever adds limits to the RAM's."""
from __future__ import annotations

import pytest

from tpscalc.catalog import get_cpu, get_model, store
from tpscalc.estimate import cpu_speed, engine
from tpscalc.estimate.query import Query, Rig


@pytest.mark.parametrize(("cpu", "bandwidth", "is_float", "bound"), [
    ("Ryzen 7 7700X", 96.0, False, "cpu_fabric"),  # one CCD reads 56 GB/s < DDR5-6000's 96
    ("Ryzen 9 7950X", 96.0, False, "ram_bandwidth"),  # two CCDs read 113
    ("Ryzen 5 7600X", 96.0, False, "cpu_compute"),  # six cores stream less than one CCD reads
    ("Apple M1 Max", 400.0, True, "cpu_compute"),  # 8 P-cores on F16, well under 204 GB/s
])
def test_the_binding_limit_is_named(cpu: str, bandwidth: float, is_float: bool,
                                    bound: str) -> None:
    rate, named = cpu_speed.decode_rate_gb_s(get_cpu(cpu), bandwidth, is_float)
    assert named == bound
    assert rate == min(cpu_speed.decode_rates_gb_s(get_cpu(cpu), bandwidth, is_float).values())


def test_moe_reads_cost_more() -> None:
    cpu = get_cpu("Ryzen 9 7950X")
    dense, _ = cpu_speed.decode_rate_gb_s(cpu, 96.0, False)
    moe, _ = cpu_speed.decode_rate_gb_s(cpu, 96.0, False, is_moe=True)
    assert moe == pytest.approx(dense / cpu_speed.CPU_FIT.moe_decode_factor)


def test_naming_the_cpu_never_speeds_decode_up() -> None:
    for cpu in store.cpus():
        rates = cpu_speed.decode_rates_gb_s(cpu, 96.0, False)
        assert rates["ram_bandwidth"] == pytest.approx(cpu_speed.RAM_EFFICIENCY * 96.0)
        assert min(rates.values()) <= rates["ram_bandwidth"]


def _cpu_only(**rig: object) -> engine.Estimate:  # type: ignore[name-defined]
    return engine.estimate(get_model("Llama 3.1-8B"), Rig((), 64, **rig),  # type: ignore[arg-type]
                           Query(), "Q4_K_M")


def test_a_cpu_rig_reads_the_cpus_memory_and_prefills_at_its_flops() -> None:
    unnamed = _cpu_only(ram_bandwidth_gb_s=83.2)
    named = _cpu_only(cpu=get_cpu("Ryzen 9 7950X"))  # DDR5-5200 × 2: 83.2 GB/s
    assert named.gpu == "CPU only (Ryzen 9 7950X)" and named.fit == "cpu"
    assert named.decode.bound == "ram_bandwidth"
    assert named.decode.tokens_per_s == pytest.approx(unnamed.decode.tokens_per_s)
    flops = cpu_speed.prefill_flops(get_cpu("Ryzen 9 7950X"))
    assert named.prefill.tokens_per_s / unnamed.prefill.tokens_per_s == pytest.approx(
        flops / 1e12, rel=1e-6)  # unnamed: 1 TFLOPS


def test_a_one_ccd_desktop_cpu_is_fabric_bound() -> None:
    est = _cpu_only(ram_bandwidth_gb_s=96.0, cpu=get_cpu("Ryzen 7 7700X"))
    assert est.decode.bound == "cpu_fabric"
    assert est.decode.tokens_per_s < _cpu_only(ram_bandwidth_gb_s=96.0).decode.tokens_per_s
