"""report.rigs.card_rigs (a model report's ~850 rigs, the options checked once) builds the same
rigs as card_rig card by card, host figures included, for every kind of options."""
from __future__ import annotations

import pytest

from tpscalc.catalog import store
from tpscalc.estimate.query import EstimateInputError, Rig
from tpscalc.report.request import MODEL_RIG_REPORT_PARAMS, RigOptions, parse_request
from tpscalc.report.rigs import card_rig, card_rigs


def _host(rig: Rig) -> tuple[object, ...]:
    return (rig.host_os, rig.headroom_gib, rig.usable_ram_gib, rig.cpu, rig.ram_bandwidth_gb_s,
            rig.name)


@pytest.mark.parametrize("opts", [
    {}, {"ram": "64"}, {"gpus": "2", "ram": "64"}, {"gpus": "4"},
    {"gpus": "2", "ram": "32", "ram_type": "DDR5-6000", "os": "linux"},
    {"ram": "128", "cpu": "7950X"}, {"ram": "16", "ram_headroom": "2", "gpu_memory": "20"},
])
def test_card_rigs_are_card_rig_card_by_card(opts: dict[str, str]) -> None:
    options = parse_request(opts, MODEL_RIG_REPORT_PARAMS).rig
    cards = store.cards()
    expected = [card_rig(c, options) for c in cards]
    made = card_rigs(cards, options)
    assert made == expected
    assert [_host(r) for r in made] == [_host(r) for r in expected]
    assert any(c.unified_memory for c in cards)  # Apple chips: another OS and their CPU


def test_a_copy_keeps_the_number_of_devices() -> None:
    rig = card_rig(store.cards()[0], RigOptions(gpus=2, ram_gib=64))
    with pytest.raises(ValueError, match="number of devices"):
        rig.with_devices(rig.devices[:1], None, None)


def test_bad_options_fail_as_card_rig_does() -> None:
    with pytest.raises(EstimateInputError):
        card_rigs(store.cards(), RigOptions(gpus=2, ram_gib=-1))
