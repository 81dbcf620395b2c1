"""Card names resolve the way people type them, and every measured device finds its card."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest

from tpscalc.catalog import match_card, store
from tpscalc.catalog.lookup import NameNotFoundError, resolve

# The shared data checkout sits beside the repository (as in CI); absent on a bare machine.
MEASURED = Path(__file__).resolve().parents[2] / "data/measured/llamacpp_calibration.csv"


def _devices() -> list[str]:
    if not MEASURED.exists():
        return []
    with MEASURED.open(newline="") as f:
        return sorted({r["device"] for r in csv.DictReader(f)})


@pytest.mark.skipif(not MEASURED.exists(), reason="shared measured data not present")
def test_every_measured_device_resolves_to_its_card() -> None:
    cards = store.cards()
    wrong = {d: resolve(d, cards, "card").name for d in _devices()}
    assert {d: n for d, n in wrong.items() if n != d} == {}
    assert len(wrong) > 50


@pytest.mark.parametrize(("query", "name"), [
    ("RTX 4090", "GeForce RTX 4090"), ("4090", "GeForce RTX 4090"),
    ("rtx4090", "GeForce RTX 4090"), ("geforce-rtx-4090", "GeForce RTX 4090"),
    ("M2 Max 38-core", "Apple M2 Max (38-core GPU)"), ("T4", "Tesla T4"),
    ("MI300X", "Radeon Instinct MI300X"), ("A6000", "RTX A6000"),
    ("NVIDIA GB10 (DGX Spark)", "GB10"), ("NVIDIA GeForce RTX 5090 32GB", "GeForce RTX 5090"),
    ("8060S", "Ryzen AI Max+ 395 (Radeon 8060S)"),
    ("GeForce GTX 1650 Max-Q (GDDR6)", "GeForce GTX 1650 Max-Q (GDDR6)"),
])
def test_typed_forms(query: str, name: str) -> None:
    assert resolve(query, store.cards(), "card").name == name


@pytest.mark.parametrize(("query", "expected"), [
    ("H100", "H100 SXM5 80 GB"), ("M4 Max", "Apple M4 Max (40-core GPU)"),
    ("GTX 1650 Max-Q", "GeForce GTX 1650 Max-Q (GDDR6)"),
])
def test_ambiguous_names_list_candidates(query: str, expected: str) -> None:
    with pytest.raises(NameNotFoundError, match="ambiguous") as err:
        resolve(query, store.cards(), "card")
    assert expected in err.value.suggestions


@pytest.mark.parametrize(("query", "base", "others"), [
    ("M4 Max", "Apple M4 Max (32-core GPU)", ["Apple M4 Max (40-core GPU)"]),
    ("mac studio m3 ultra", "Apple M3 Ultra (60-core GPU)", ["Apple M3 Ultra (80-core GPU)"]),
    ("m3 ultra 256gb", "Apple M3 Ultra (60-core GPU)", ["Apple M3 Ultra (80-core GPU)"]),
])
def test_variants_of_one_chip_take_the_base_and_name_the_others(
        query: str, base: str, others: list[str]) -> None:
    # resolve (get_card, the calibration's and benchmarks' lookup) lists them; match_card, the
    # answers' lookup, takes the base one and names the others
    match = match_card(query)
    assert match.card.name == base
    assert [c.name for c in match.alternatives] == others
    note = match.note(query) or ""
    assert base in note and all(o in note for o in others)


def test_different_cards_under_one_name_stay_ambiguous_for_answers() -> None:
    for query in ("H100", "GTX 1650 Max-Q"):
        with pytest.raises(NameNotFoundError, match="ambiguous"):
            match_card(query)


@pytest.mark.parametrize(("query", "name"), [
    ("m4 max 128gb", "Apple M4 Max (40-core GPU)"),
    ("m3 ultra 512", "Apple M3 Ultra (80-core GPU)"),
    ("Apple M4 Max (40-core GPU)", "Apple M4 Max (40-core GPU)"), ("4090", "GeForce RTX 4090"),
])
def test_a_name_that_settles_the_variant_has_no_alternatives(query: str, name: str) -> None:
    match = match_card(query)
    assert (match.card.name, match.alternatives, match.note(query)) == (name, (), None)


def test_unknown_name_lists_close_names() -> None:
    with pytest.raises(NameNotFoundError, match="unknown") as err:
        resolve("GeForce RTX 4099", store.cards(), "card")
    assert "GeForce RTX 4090" in err.value.suggestions
