"""RAM from type, speed and channels, and the PCIe link: parsed once in the request table, so
the CLI, the Python API, the JSON API and the site all take them."""
from __future__ import annotations

import pytest

from tpscalc.report.request import (
    RequestError,
    parse_pcie,
    parse_request,
    pcie_gb_s,
    ram_bandwidth_gb_s,
)


@pytest.mark.parametrize(("text", "channels", "gb_s"), [
    ("DDR5-6000", 2, 96.0), ("ddr4-3200", 2, 51.2), ("DDR5 4800", 8, 307.2),
    ("LPDDR5X-8533", 4, 273.056), ("LPDDR5-6400", 2, 102.4),
])
def test_ram_bandwidth_is_transfers_times_8_bytes_times_channels(
        text: str, channels: int, gb_s: float) -> None:
    assert ram_bandwidth_gb_s(text, channels) == pytest.approx(gb_s)


def test_the_request_derives_the_bandwidth_with_two_channels_by_default() -> None:
    rig = parse_request({"ram_type": "DDR5-6000"}).rig
    assert rig.ram_type == "DDR5-6000" and rig.bandwidth_gb_s == 96.0
    assert parse_request({"ram_type": "DDR5-6000", "ram_channels": "4"}).rig.bandwidth_gb_s \
        == 192.0
    assert parse_request({"ram_bandwidth": "80"}).rig.bandwidth_gb_s == 80.0
    assert parse_request({}).rig.bandwidth_gb_s is None
    # a bandwidth given directly is the measured fact: it wins over the type's peak
    assert parse_request({"ram_type": "DDR5-6000", "ram_bandwidth": "70"}).rig.bandwidth_gb_s \
        == 70.0
    assert parse_request({"ram_channels": "4"}).rig.bandwidth_gb_s is None  # no type: no rate


@pytest.mark.parametrize(("text", "canonical", "gb_s"), [
    ("4x16", "4x16", 31.5), ("gen3 x8", "3x8", 7.88), ("PCIe 5.0 x16", "5x16", 63.0),
    ("4×4", "4x4", 7.876),
])
def test_pcie_links(text: str, canonical: str, gb_s: float) -> None:
    assert parse_pcie(text) == canonical
    assert pcie_gb_s(canonical) == pytest.approx(gb_s, rel=0.01)


@pytest.mark.parametrize("raw", [
    {"ram_type": "DDR7-6000"}, {"ram_type": "fast"}, {"ram_type": "DDR5-60"},
    {"ram_type": "DDR5-6000", "ram_channels": "0"}, {"ram_type": "DDR5-6000", "ram_channels": "99"},
    {"pcie": "4x3"}, {"pcie": "7x16"}, {"pcie": "x16"}, {"pcie": "4x16\x00"},
])
def test_bad_values_are_one_line_errors(raw: dict[str, str]) -> None:
    with pytest.raises(RequestError) as caught:
        parse_request(raw)
    assert "\n" not in str(caught.value) and caught.value.code.startswith("bad_")


def test_the_engine_uses_them() -> None:
    from tpscalc import api

    args = {"quant": "Q4_K_M", "ram_gib": 64}
    by_type = api.evaluate("Llama 3.3 70B", "GeForce RTX 4090", ram_type="DDR5-6000",
                           ram_channels=2, **args)
    by_rate = api.evaluate("Llama 3.3 70B", "GeForce RTX 4090", ram_bandwidth_gb_s=96, **args)
    assert by_type["fit"] == "offload"
    assert by_type["decode"]["tokens_per_s"] == by_rate["decode"]["tokens_per_s"]
    slow = api.evaluate("Llama 3.3 70B", "GeForce RTX 4090", ram_bandwidth_gb_s=96,
                        pcie="3x4", **args)
    fast = api.evaluate("Llama 3.3 70B", "GeForce RTX 4090", ram_bandwidth_gb_s=96,
                        pcie="5x16", **args)
    # the copies of the CPU-resident weights bound a partial offload's prompt speed
    assert slow["prefill"]["tokens_per_s"] < by_rate["prefill"]["tokens_per_s"] \
        < fast["prefill"]["tokens_per_s"]


def test_a_unified_chip_brings_its_cpu_and_a_named_cpu_its_channels() -> None:
    from tpscalc.report.request import RigOptions
    from tpscalc.report.rigs import build_rig

    apple = build_rig("Apple M1 Max (32-core GPU)", RigOptions(n_gpu_layers=0))
    assert apple.cpu is not None and apple.cpu.name == "Apple M1 Max"
    # a Threadripper PRO takes 8 channels: DDR5-5200 in all of them, 332.8 GB/s
    tr = build_rig("none", RigOptions(ram_gib=256, ram_type="DDR5-5200",
                                      cpu="Threadripper PRO 7975WX"))
    assert tr.ram_bandwidth_gb_s == pytest.approx(332.8)
    two = build_rig("none", RigOptions(ram_gib=256, ram_type="DDR5-5200", ram_channels=2,
                                       cpu="Threadripper PRO 7975WX"))
    assert two.ram_bandwidth_gb_s == pytest.approx(83.2)  # the channels given win


def test_cpu_is_checked_and_named_as_the_table_names_it() -> None:
    assert parse_request({"cpu": "7950X"}).rig.cpu == "Ryzen 9 7950X"
    with pytest.raises(RequestError) as err:
        parse_request({"cpu": "Ryzen 9 7955"})
    assert err.value.code == "unknown_cpu" and err.value.suggestions
