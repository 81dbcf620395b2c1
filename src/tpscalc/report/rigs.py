"""A rig from the way people write it: "RTX 4090", "2x RTX 3090", "RTX 3090 + RTX 3060 12 GB",
"none" (the CPU alone), with the request's RAM, CPU, card count and placement. Parsed here
only. A unified-memory chip (Apple, Strix Halo, GB10) brings its own CPU when none is named."""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from tpscalc.catalog import Card, Cpu, NameNotFoundError, cpu_of_card, get_card, match_card
from tpscalc.estimate import host
from tpscalc.estimate.query import EstimateInputError, Rig
from tpscalc.estimate.types import Estimate
from tpscalc.report.request import MAX_GPUS, RigOptions, find_cpu, ram_bandwidth_gb_s

# "2x 3090": compiled on first use (re's cache). At most two digits: a longer number is part of
# the name ("7900 xtx" is one Radeon RX 7900 XTX, not 7900 cards named "tx").
_COUNT = r"(?i)^\s*(\d{1,2})\s*[x×*]\s*(.+)$"
NO_GPU = frozenset({"none", "cpu", "no gpu", "no"})


def _one_card(text: str) -> Card | None:
    """The card `text` names when it is one card's name with a "+" in it ("Ryzen AI Max+ 395"),
    else None: then the "+" joins the cards of a rig."""
    if "+" not in text or re.match(_COUNT, text):
        return None
    try:
        card = get_card(text.strip())
    except NameNotFoundError:
        return None
    return card if "+" in card.name else None


def is_rig_text(text: str) -> bool:
    """A rig written out ("2x …", "A + B", "none"), not the name of one card."""
    return bool(text.strip().lower() in NO_GPU or re.match(_COUNT, text)
                or ("+" in text and _one_card(text) is None))


def parse_cards(text: str) -> tuple[Card, ...]:
    """The cards a rig text names, in order; () for "none"; unknown names raise."""
    return parse_rig_text(text)[0]


def parse_rig_text(text: str) -> tuple[tuple[Card, ...], tuple[str, ...]]:
    """The cards a rig text names, and a note for each name taken as one of a chip's variants
    ("M4 Max": CardMatch.note)."""
    if text.strip().lower() in NO_GPU:
        return (), ()
    if not text.strip():
        return (get_card(text),), ()  # the lookup's own message for an empty name
    whole = _one_card(text)
    if whole is not None:
        return (whole,), ()
    cards: list[Card] = []
    notes: list[str] = []
    for part in text.split("+"):
        part = part.strip()
        if not part:
            raise EstimateInputError(f"empty card name in {text!r}", "bad_card")
        found = re.match(_COUNT, part)
        count, name = (int(found.group(1)), found.group(2)) if found else (1, part)
        if not 1 <= count <= MAX_GPUS:
            raise EstimateInputError(f"card count must be 1 to {MAX_GPUS}, not {count}",
                                     "bad_gpus")
        matched = match_card(name.strip())
        cards += [matched.card] * count
        note = matched.note(name)
        if note is not None and note not in notes:
            notes.append(note)
    if len(cards) > MAX_GPUS:
        raise EstimateInputError(f"a rig holds at most {MAX_GPUS} cards", "bad_gpus")
    return tuple(cards), tuple(notes)


def build_rig(card: str | Card, options: RigOptions) -> Rig:
    """The rig of `card` (a name, a rig text or a Card) with `options`' RAM and placement."""
    cards, notes = ((card,), ()) if isinstance(card, Card) else parse_rig_text(card)
    if options.gpus is not None and options.gpus > 1:
        if len(cards) != 1:
            raise EstimateInputError("--gpus takes one card name; write mixed rigs as A + B",
                                     "bad_gpus")
        if options.gpus > MAX_GPUS:
            raise EstimateInputError(f"gpus must be 1 to {MAX_GPUS}", "bad_gpus")
    cards, cpu, bandwidth = _devices(cards, options)
    return Rig(cards, options.ram_gib, bandwidth, notes=notes,
               n_gpu_layers=options.n_gpu_layers, n_cpu_moe=options.n_cpu_moe,
               tensor_split=options.tensor_split, pcie_gb_s=options.pcie_gb_s, cpu=cpu,
               os=options.os, ram_headroom_gib=options.ram_headroom_gib,
               storage_read_gb_s=options.storage_read_gb_s)


def _devices(cards: tuple[Card, ...], options: RigOptions
             ) -> tuple[tuple[Card, ...], Cpu | None, float | None]:
    """A rig's devices (`options.gpus` of a single card), its CPU and RAM bandwidth."""
    if options.gpus is not None and options.gpus > 1:
        cards = cards * options.gpus
    cards = tuple(with_gpu_memory(c, options) for c in cards)
    cpu = find_cpu(options.cpu) if options.cpu else next(
        (c for c in map(cpu_of_card, cards) if c is not None), None)
    bandwidth = options.bandwidth_gb_s
    if (cpu is not None and options.ram_type is not None and options.ram_channels is None
            and options.ram_bandwidth_gb_s is None):  # the channels the CPU takes
        bandwidth = ram_bandwidth_gb_s(options.ram_type, cpu.memory_channels)
    return cards, cpu, bandwidth


def with_gpu_memory(card: Card, options: RigOptions) -> Card:
    """`card` with the memory its GPU may use under `options`: gpu_memory when given (at most
    the card's own), else a unified-memory chip's share under the OS (and headroom) given;
    the catalog's card, whose share is its default OS's, when neither is."""
    if options.gpu_memory_gib is not None:
        gib: float | None = min(options.gpu_memory_gib, card.memory_gib)
    elif card.unified_memory and (options.os or options.ram_headroom_gib is not None):
        gib = host.unified_gpu_gib(card, options.os or host.default_os((card,)),
                                   options.ram_headroom_gib)
    else:
        gib = None
    if gib is None or gib <= 0 or abs(gib - card.usable_memory_gib) < 1e-9:
        return card
    return card.model_copy(update={"gpu_memory_fraction": gib / card.memory_gib})


def host_json(rig: Rig, e: Estimate) -> dict[str, Any] | None:
    """What the host left to the model and which figures were assumed: the OS, its RAM
    headroom, the RAM and GPU memory usable, and, for a paging answer, what pages; None for a
    discrete card without system RAM (nothing of the host's in the answer)."""
    if rig.ram_gib is None and not any(c.unified_memory for c in rig.devices):
        return None
    out: dict[str, Any] = {
        "os": rig.host_os, "os_assumed": rig.os is None,
        "ram_gib": rig.ram_gib, "ram_headroom_gib": rig.headroom_gib,
        "usable_ram_gib": rig.usable_ram_gib,
        "gpu_memory_gib": [round(c.usable_memory_gib, 2) for c in rig.devices],
        "paging": None}
    pg = e.paging
    assumed = " (assumed; storage_read sets it)" if rig.storage_read_gb_s is None else ""
    if pg is not None:
        out["paging"] = {
            "cpu_part_gib": pg.cpu_part_gib, "resident_gib": pg.resident_gib,
            "read_per_token_gib": pg.read_per_token_gib,
            "storage_read_gb_s": pg.storage_read_gb_s,
            "storage_read_assumed": rig.storage_read_gb_s is None,
            "note": (f"pages: the {pg.cpu_part_gib:.1f} GiB in system RAM exceed the "
                     f"{pg.resident_gib:.1f} GiB left after the OS's {rig.headroom_gib:g} GiB "
                     f"({rig.host_os}{', assumed' if rig.os is None else ''}); each token "
                     f"re-reads about {pg.read_per_token_gib:.2f} GiB from storage at "
                     f"{pg.storage_read_gb_s:g} GB/s{assumed}; the slow end of the range "
                     "re-reads every byte the CPU reads")}
    return out


def card_rig(card: Card, options: RigOptions) -> Rig:
    """One catalog card as a report row's rig: alone (the default), or `options.gpus` of it
    with the request's RAM."""
    return Rig.of(card) if options.is_default else build_rig(card, options)


def card_rigs(cards: Sequence[Card], options: RigOptions) -> list[Rig]:
    """card_rig of each card (a model report's rows): the first built and checked in full, the
    others as its copies with their own devices, CPU and RAM bandwidth (Rig.with_devices)."""
    if options.is_default or not cards:
        return [card_rig(c, options) for c in cards]
    first = build_rig(cards[0], options)
    return [first, *(first.with_devices(*_devices((c,), options)) for c in cards[1:])]
