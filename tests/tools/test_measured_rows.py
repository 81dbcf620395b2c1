"""The measured rows of data/measured/llamacpp_extra_calibration.csv: sourced, unique, and
loaded by tools/calibration_data.py on the cards and models they name."""
from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

from calibration_data import EXTRA_CSV, EXTRA_GPUS, EXTRA_MODELS, extra_rows

from tpscalc.catalog import get_card, get_model

ROWS = list(csv.DictReader(EXTRA_CSV.open(encoding="utf-8")))


def _key(r: dict[str, str]) -> tuple[str, ...]:
    """What makes two rows the same measurement (the test name without its spaces)."""
    return (r["gpu"], r["n_gpus"], r["backend"], r["runtime"], r["model"], r["quant"],
            r["test"].replace(" ", ""), r["split_mode"], r["ngl"], r["offload_notes"],
            r["flash_attn"])


def test_every_row_has_a_source_and_a_positive_speed() -> None:
    assert all(r["source"].strip() and float(r["tokens_per_s"]) > 0 for r in ROWS)


def test_no_measurement_is_entered_twice() -> None:
    keys = [_key(r) for r in ROWS]
    assert len(keys) == len(set(keys))


@pytest.mark.parametrize("label", sorted(EXTRA_MODELS))
def test_each_model_label_maps_to_a_catalog_architecture(label: str) -> None:
    assert any(r["model"].startswith(label) for r in ROWS)
    assert getattr(get_model(EXTRA_MODELS[label]), "architecture", None) is not None


@pytest.mark.parametrize("prefix", sorted(EXTRA_GPUS))
def test_each_gpu_label_maps_to_a_catalog_card(prefix: str) -> None:
    assert any(r["gpu"].startswith(prefix) for r in ROWS)
    assert get_card(EXTRA_GPUS[prefix]).name == EXTRA_GPUS[prefix]


def test_strix_halo_rows_load_on_both_backends_at_depth_and_in_prompts() -> None:
    """kyuz0/amd-strix-halo-toolboxes: ROCm and Vulkan, pp and tg, depth 0 to 65536."""
    obs = [o for o in extra_rows(get_card, get_model)
           if o.card.name == "Ryzen AI Max+ 395 (Radeon 8060S)"]
    assert {(o.backend, o.kind) for o in obs} == {
        (b, k) for b in ("rocm", "vulkan") for k in ("decode", "prefill")}
    assert {o.depth for o in obs} == {0, 32768, 65536}
    assert sum(o.is_moe and o.kind == "prefill" for o in obs) >= 20
