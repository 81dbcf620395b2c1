"""What the OS leaves to a model (estimate/host.py): headroom, unified-memory shares, paging."""
from __future__ import annotations

import pytest

from tpscalc.catalog import get_card
from tpscalc.catalog.store import cards
from tpscalc.estimate import host

GIB = 2**30


@pytest.mark.parametrize(("name", "os_name", "gib"), [
    ("Apple M4 Max (40-core GPU)", "macos", 96.0),  # 3/4 of 128
    ("Apple M4 (10-core GPU)", "macos", 32 * 2 / 3),  # 2/3 up to 36 GB
    ("Ryzen AI Max+ 395 (Radeon 8060S)", "windows", 96.0),  # Variable Graphics Memory
    ("Ryzen AI Max+ 395 (Radeon 8060S)", "linux", 128 - host.RAM_HEADROOM_GIB["linux"]),
    ("GB10", "linux", host.GB10_VISIBLE_GIB - host.GB10_OS_IDLE_GIB),
])
def test_unified_gpu_share_by_os(name: str, os_name: str, gib: float) -> None:
    assert host.unified_gpu_gib(get_card(name), os_name) == pytest.approx(gib)


def test_a_discrete_card_has_no_os_share() -> None:
    assert host.unified_gpu_gib(get_card("RTX 4090"), "windows") is None


def test_the_catalog_default_is_the_default_os_share() -> None:
    """The catalog's gpu_memory_fraction of each chip is what host.py gives under the OS assumed
    for it: tools/build_cards.py takes it from there (fails when the catalog is not rebuilt)."""
    checked = 0
    for card in cards():
        gib = host.unified_gpu_gib(card, host.default_os((card,)))
        if gib is not None:
            assert card.usable_memory_gib == pytest.approx(gib, abs=0.02), card.name
            checked += 1
    assert checked >= 30  # the Apple chips, Strix Halo and GB10


def test_headroom_defaults_and_given() -> None:
    assert host.ram_headroom_gib("windows") > host.ram_headroom_gib("linux") > 0
    assert host.ram_headroom_gib("linux", 0.5) == 0.5
    assert host.usable_ram_gib(16, 3) == 13 and host.usable_ram_gib(2, 3) == 0


def test_nothing_pages_when_it_fits() -> None:
    part = host.CpuPart(1e9, 1e9, 4e9, 8e9, resident=12e9)
    assert part.paged_per_token() == 0 and not part.pages()


def test_experts_page_in_the_share_the_ram_cannot_hold() -> None:
    """Dense 4 GB resident; 6 of 8 GB of experts held: a quarter of their reads miss."""
    part = host.CpuPart(1e9, 2e9, 4e9, 8e9, resident=10e9)
    assert part.paged_per_token() == pytest.approx(0.5e9) and part.pages()
    assert part.paged_per_pass() == pytest.approx(2e9)  # a micro-batch reads every expert


def test_a_dense_scan_larger_than_the_ram_rereads_everything() -> None:
    part = host.CpuPart(5e9, 1e9, 5e9, 1e9, resident=4e9)
    assert part.paged_per_token() == pytest.approx(6e9)
    assert not part.pages()  # every token re-reads the whole CPU part: "does not fit"


def test_less_than_half_resident_is_no_paging_answer() -> None:
    part = host.CpuPart(0.1e9, 1e9, 1e9, 20e9, resident=8e9)
    assert part.paged_per_token() > 0 and not part.pages()
