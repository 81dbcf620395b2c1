"""The reports on a rig: `--gpus N` copies of each card, with system RAM (real engine)."""
from __future__ import annotations

import pytest

from tpscalc.catalog import get_card, get_model
from tpscalc.catalog.lookup import NameNotFoundError
from tpscalc.estimate.query import EstimateInputError
from tpscalc.report.card_report import build_card_report
from tpscalc.report.model_report import build_model_report
from tpscalc.report.request import RigOptions, parse_request
from tpscalc.report.rigs import card_rig, parse_cards


def test_card_report_on_two_cards_with_ram() -> None:
    request = parse_request({"gpus": "2", "ram": "64", "ram_bandwidth": "96"})
    assert request.rig == RigOptions(gpus=2, ram_gib=64.0, ram_bandwidth_gb_s=96.0)
    report = build_card_report(get_card("RTX 4090"), request,
                               models=[get_model("Llama 3.3 70B"), get_model("Llama 3.1-8B")])
    fits = {r.model.name: r.estimate for r in report.rows}
    big = fits["Llama 3.3 70B"]
    assert big.placement is not None and len(big.placement.devices) == 2


def test_model_report_rows_are_rigs() -> None:
    request = parse_request({"gpus": "2"})
    report = build_model_report(get_model("Llama 3.1-8B"), request,
                                cards=[get_card("RTX 3060 12 GB")])
    assert report.rows[0].estimate.gpu == "GeForce RTX 3060 12 GB + GeForce RTX 3060 12 GB"


@pytest.mark.parametrize(("text", "count"), [
    ("RTX 4090", 1), ("2x RTX 3090", 2), ("2 x rtx 3090", 2), ("RTX 3090 + RTX 3060 12 GB", 2),
    ("2x RTX 3090 + RTX 3060 12 GB", 3), ("none", 0),
])
def test_rig_names(text: str, count: int) -> None:
    assert len(parse_cards(text)) == count


@pytest.mark.parametrize("text", ["0x RTX 4090", "17x RTX 4090", "RTX 4090 +", "3x RTX 9999"])
def test_bad_rig_names(text: str) -> None:
    with pytest.raises((EstimateInputError, NameNotFoundError)):
        parse_cards(text)


def test_the_default_rig_is_one_card() -> None:
    card = get_card("RTX 4090")
    assert card_rig(card, RigOptions()).is_single_card
    assert len(card_rig(card, RigOptions(gpus=4)).devices) == 4


def test_a_card_name_with_a_plus_is_one_card_not_a_rig() -> None:
    """"Ryzen AI Max+ 395" is one device; "+" joins cards only between names."""
    from tpscalc import api
    from tpscalc.report.rigs import is_rig_text, parse_cards

    (card,) = parse_cards("Ryzen AI Max+ 395")
    assert card.name.startswith("Ryzen AI Max+ 395")
    assert not is_rig_text("Ryzen AI Max+ 395") and is_rig_text("RTX 3090 + RTX 3060 12 GB")
    assert len(parse_cards("RTX 3090 + RTX 3060 12 GB")) == 2
    assert api.evaluate("Llama 3.1-8B", "Ryzen AI Max+ 395")["gpu"] == card.name
