"""A rig from the way people write it: "RTX 4090", "2x RTX 3090", "RTX 3090 + RTX 3060 12 GB",
"none" (the CPU alone), with the request's RAM, CPU, card count and placement. Parsed here
only. A unified-memory chip (Apple, Strix Halo, GB10) brings its own CPU when none is named."""
from __future__ import annotations

import re

from tpscalc.catalog import Card, NameNotFoundError, cpu_of_card, get_card, match_card
from tpscalc.estimate.query import EstimateInputError, Rig
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
        cards = cards * options.gpus
    cpu = find_cpu(options.cpu) if options.cpu else next(
        (c for c in map(cpu_of_card, cards) if c is not None), None)
    bandwidth = options.bandwidth_gb_s
    if (cpu is not None and options.ram_type is not None and options.ram_channels is None
            and options.ram_bandwidth_gb_s is None):  # the channels the CPU takes
        bandwidth = ram_bandwidth_gb_s(options.ram_type, cpu.memory_channels)
    return Rig(cards, options.ram_gib, bandwidth, notes=notes,
               n_gpu_layers=options.n_gpu_layers, n_cpu_moe=options.n_cpu_moe,
               tensor_split=options.tensor_split, pcie_gb_s=options.pcie_gb_s, cpu=cpu)


def card_rig(card: Card, options: RigOptions) -> Rig:
    """One catalog card as a report row's rig: alone (the default), or `options.gpus` of it
    with the request's RAM."""
    return Rig.of(card) if options.is_default else build_rig(card, options)
