"""The CPU table (tools/data/cpus.csv -> catalog/data/cpus.json): it loads, every figure has its
source or derivation, the rebuild is byte-identical, and names resolve like cards'."""
from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path

import pytest

from tpscalc.catalog import NameNotFoundError, cpu_of_card, get_card, get_cpu, store

ROOT = Path(__file__).resolve().parents[2]


def _build_cpus():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(ROOT / "tools"))
    import build_cpus

    return build_cpus


def test_table_loads_with_sources() -> None:
    cpus = store.cpus()
    assert len(cpus) >= 60
    for cpu in cpus:
        assert cpu.source_url.startswith("https://"), cpu.name
        assert cpu.memory_bandwidth_source.startswith(("derived: ", "vendor figure")), cpu.name
        assert (cpu.cpu_read_gb_s is None) == (cpu.cpu_read_source is None), cpu.name
        if cpu.cpu_read_source is not None:
            assert cpu.cpu_read_source.startswith(("measured: ", "derived: ")), cpu.name
        assert cpu.peak_fp32_gflops == pytest.approx(
            cpu.p_cores * cpu.p_clock_ghz * cpu.p_fp32_flops_per_clock, abs=0.06)


def test_rebuild_reproduces_committed_file() -> None:
    build_cpus = _build_cpus()
    committed = resources.files("tpscalc.catalog.data").joinpath("cpus.json").read_text("utf-8")
    assert build_cpus.dumps(build_cpus.build()) == committed


@pytest.mark.parametrize(("name", "bandwidth", "read"), [
    # 2 × 8 B × 5200 MT/s; one CCD reads 32 B per fabric clock at 2 GHz, of which the one
    # measured chiplet part (TR PRO 7965WX: 225 of 256 GB/s) reaches 0.879
    ("Ryzen 5 7600X", 83.2, 64.0 * 0.879),
    ("Ryzen 9 7950X", 83.2, 128.0 * 0.879),
    ("Threadripper PRO 7965WX", 332.8, 225.0),  # that measurement itself
    ("Core i9-14900K", 89.6, None),  # Intel's ring: no public limit below the RAM
    ("Apple M1 Max", 400.0, 204.0),  # Apple's figure; AnandTech's measured CPU read
])
def test_derived_figures(name: str, bandwidth: float, read: float | None) -> None:
    cpu = get_cpu(name)
    assert cpu.memory_bandwidth_gb_s == pytest.approx(bandwidth)
    assert cpu.cpu_read_gb_s == (None if read is None else pytest.approx(read, abs=0.01))


def test_unified_chips_know_their_cpu() -> None:
    for cpu in store.cpus():
        for card_name in cpu.cards:
            card = get_card(card_name)
            assert card.unified_memory and cpu_of_card(card) == cpu
            assert cpu.memory_bandwidth_gb_s == pytest.approx(card.bandwidth_gb_s)
    assert cpu_of_card(get_card("Apple M3 Max (40-core GPU)")).name == \
        "Apple M3 Max (16-core CPU)"  # type: ignore[union-attr]
    assert cpu_of_card(get_card("GeForce RTX 4090")) is None


@pytest.mark.parametrize(("typed", "name"), [
    ("7950X", "Ryzen 9 7950X"), ("AMD Ryzen 7 5800X", "Ryzen 7 5800X"),
    ("Intel Core Ultra 7 155H", "Core Ultra 7 155H"), ("ryzen ai max+ 395", "Ryzen AI Max+ 395"),
])
def test_names_resolve(typed: str, name: str) -> None:
    assert get_cpu(typed).name == name


def test_unknown_cpu_lists_the_closest() -> None:
    with pytest.raises(NameNotFoundError) as err:
        get_cpu("Ryzen 9 7955")
    assert "unknown CPU" in str(err.value) and err.value.suggestions


def test_a_stated_bandwidth_far_from_the_derived_one_is_refused() -> None:
    build_cpus = _build_cpus()
    row = {"name": "X", "memory_type": "DDR5-5600", "memory_channels": "2",
           "memory_bandwidth_gb_s": "120"}
    with pytest.raises(ValueError, match="is not 89.6"):
        build_cpus._memory(row)


@pytest.mark.parametrize(("typed", "name", "memory", "channels"), [
    ("Ryzen 7 7840HS", "Ryzen 7 7840HS", "LPDDR5X-7500", 2),  # Phoenix laptops
    ("AMD Ryzen 5 3500", "Ryzen 5 3500", "DDR4-3200", 2),
    ("Ryzen AI 9 HX 370", "Ryzen AI 9 HX 370", "LPDDR5X-7500", 2),
    ("8700G", "Ryzen 7 8700G", "DDR5-5200", 2),
    ("Intel Core i7-13700H", "Core i7-13700H", "LPDDR5X-6400", 2),
    ("i9-14900HX", "Core i9-14900HX", "DDR5-5600", 2),
    ("Core Ultra 9 285H", "Core Ultra 9 285H", "LPDDR5X-8400", 2),
])
def test_laptop_and_desktop_cpus_people_run_llms_on(typed: str, name: str, memory: str,
                                                     channels: int) -> None:
    """Issue 24: common laptop and desktop CPUs by name, with their memory and channels."""
    cpu = get_cpu(typed)
    assert (cpu.name, cpu.memory_type, cpu.memory_channels) == (name, memory, channels)


def test_monolithic_chips_have_no_derived_fabric_limit() -> None:
    """An APU has no CCD link: no read limit is derived for it (chiplet parts have one)."""
    assert get_cpu("Ryzen 7 7840HS").cpu_read_gb_s is None
    assert get_cpu("Ryzen 5 3500").cpu_read_gb_s == pytest.approx(32 * 1.6 * 0.879, abs=0.01)
