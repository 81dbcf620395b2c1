"""llama.cpp --fit placement against hand-worked cases (GiB figures, 1,024 MiB margin)."""
from __future__ import annotations

import pytest

from tpscalc.estimate.placement import DeviceSlot, ModelLayout, UserPlacement, place

G = 2**30
# 10 layers of 1 GiB with 0.1 GiB of KV each, a 0.5 GiB output head and 0.5 GiB embeddings.
DENSE = ModelLayout(10, 1 * G, 0.0, 0.1 * G, 0.5 * G, 0.5 * G)
# 10 MoE layers of 2 GiB, 1.6 GiB of them experts; no KV, head or embeddings.
MOE = ModelLayout(10, 2 * G, 1.6 * G, 0.0, 0.0, 0.0)


def slot(usable_gib: float, buffer_gib: float = 0.5) -> DeviceSlot:
    return DeviceSlot("card", usable_gib * G, buffer_gib * G)


def test_two_cards_split_in_proportion_to_free_memory() -> None:
    # free: 10 - 0.5 - 1 = 8.5 GiB each, the last less the 0.5 GiB head: 8.5 : 8.0, cumulative
    # 0.515 : 1; layer i on the first card while i / 10 < 0.515 -> 6 : 4
    p = place(DENSE, [slot(10), slot(10)], None)
    assert p.fits and p.tensor_split == (6, 4) and p.n_gpu_layers == 11
    assert p.devices[1].weights_bytes == pytest.approx(4.5 * G)  # 4 layers + the head
    assert p.devices[1].kv_bytes == pytest.approx(0.4 * G)
    assert p.cpu_weights_bytes == pytest.approx(0.5 * G)  # the embeddings stay in RAM
    assert p.offload_share(11 * G) == 0.0


def test_uneven_cards_fill_back_to_front() -> None:
    # free 4.5 and 8.5 - 0.5 = 8.0: cumulative 0.36 -> 4 : 6; the last card gets layers 4-9
    p = place(DENSE, [slot(6), slot(10)], None)
    assert p.tensor_split == (4, 6) and p.fits


def test_layers_leave_the_gpu_when_it_is_full() -> None:
    # free 6 - 0.5 - 1 - 0.5 (head) = 4.0 GiB: 3 layers of 1.1 GiB; 7 layers go to RAM
    p = place(DENSE, [slot(6)], 16 * G)
    assert p.fits and p.tensor_split == (3,) and p.n_gpu_layers == 4 and p.cpu_layers == 7
    assert p.cpu_weights_bytes == pytest.approx(7.5 * G)
    assert p.offload_share(11 * G) == pytest.approx(7 / 11)


def test_without_ram_nothing_moves_and_it_does_not_fit() -> None:
    assert not place(DENSE, [slot(6)], None).fits


def test_moe_experts_move_to_the_cpu_before_layers() -> None:
    # 20 GiB on a card with 12 - 1 = 11 GiB free: 20 - 1.6 k <= 11 -> k = 6
    p = place(MOE, [slot(12, 0.0)], 64 * G)
    assert p.fits and p.n_cpu_moe == 6 and p.cpu_layers == 0 and p.n_gpu_layers == 11
    assert p.cpu_weights_bytes == pytest.approx(6 * 1.6 * G)


@pytest.mark.parametrize(("ngl", "split", "expected"), [
    (5, None, (3, 2)),  # cumulative 0.515: i / 5 < 0.515 for i = 0, 1, 2
    (11, (3.0, 1.0), (8, 2)),  # -ts 3,1: i / 10 < 0.75 for i = 0..7
])
def test_a_user_placement_is_taken_as_given(ngl: int, split: tuple[float, ...] | None,
                                            expected: tuple[int, ...]) -> None:
    p = place(DENSE, [slot(10), slot(10)], 32 * G, UserPlacement(ngl, None, split))
    assert p.tensor_split == expected
    assert p.output_on_gpu == (ngl > 10)


def test_a_user_split_past_a_card_does_not_fit() -> None:
    p = place(DENSE, [slot(10), slot(10)], 32 * G, UserPlacement(11, None, (1.0, 0.0)))
    assert p.tensor_split == (10, 0) and not p.fits


@pytest.mark.parametrize(("ram_gib", "fits"), [(16, True), (8, False)])
def test_cpu_only_needs_the_whole_model_in_ram(ram_gib: float, fits: bool) -> None:
    p = place(DENSE, [], ram_gib * G)
    assert p.fits is fits and p.n_gpu_layers == 0 and p.offload_share(11 * G) == 1.0
    assert p.cpu_weights_bytes == pytest.approx(11 * G)


def test_a_given_placement_may_use_the_margin_fit_keeps_free() -> None:
    # 6 layers (6.6 GiB with KV) + 0.5 GiB buffer = 7.1 GiB on an 8 GiB card: --fit keeps
    # 1,024 MiB free, so it stops at 5 layers; -ngl 6 given by the user loads and runs
    chosen = place(DENSE, [slot(8)], 64 * G)
    assert chosen.devices[0].layers == 5
    given = place(DENSE, [slot(8)], 64 * G, UserPlacement(n_gpu_layers=6))
    assert given.fits and given.devices[0].layers == 6
    too_many = place(DENSE, [slot(8)], 64 * G, UserPlacement(n_gpu_layers=8))
    assert not too_many.fits  # 8.8 GiB of layers and KV: past the card itself
