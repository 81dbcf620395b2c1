"""Match a driver's GPU name to a catalog card.

Drivers spell names their own way: NVML says "NVIDIA H100 80GB HBM3" and "NVIDIA GeForce RTX
4090", Apple "Apple M2 Max" (the core count apart), amdgpu "AMD Radeon RX 7900 XTX". The
catalog card must carry every word of the name (less vendor, memory size and memory type), have
the detected memory (±8 %: drivers report a little less than the box), and the memory type the
name states; of those left, the one with the fewest extra words wins, and a tie is no match.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

from tpscalc.catalog.schema import Card
from tpscalc.catalog.slug import tokens
from tpscalc.machine.types import DetectedGpu

MEMORY_TOLERANCE = 0.08
_VENDOR_WORDS = re.compile(r"^(NVIDIA|AMD|ATI|Intel\(R\)|Intel)\s+", re.IGNORECASE)
_MEMORY_SIZE = re.compile(r"\b\d+\s*GB\b", re.IGNORECASE)
_MEMORY_TYPE = re.compile(r"\b(HBM\d?E?|GDDR\d+X?|LPDDR\d+X?)\b", re.IGNORECASE)
# Words that never tell two cards apart. NVML names SXM boards without their form factor
# ("NVIDIA H200", "NVIDIA H100 80GB HBM3") and the others with it ("NVIDIA H200 NVL",
# "NVIDIA H100 PCIe"), so "sxm" counts as no extra word.
_NEUTRAL = {"gb", "geforce", "radeon", "nvidia", "amd", "apple", "gpu", "core", "tesla", "sxm"}


def _core_name(gpu: DetectedGpu) -> str:
    name = _VENDOR_WORDS.sub("", gpu.name.strip())
    if gpu.vendor == "Apple" and gpu.gpu_cores:
        name = f"{name} {gpu.gpu_cores}-core GPU"
    return _MEMORY_TYPE.sub(" ", _MEMORY_SIZE.sub(" ", name.replace("-", " ")))


def _memory_fits(card: Card, memory_gib: float | None) -> bool:
    if memory_gib is None:
        return True
    sizes = (card.memory_gib, *card.memory_options_gib)
    return any(abs(memory_gib - s) <= MEMORY_TOLERANCE * s for s in sizes)


def candidates(gpu: DetectedGpu, cards: Sequence[Card]) -> list[Card]:
    """The cards `gpu` may be, best first (the first is the match when it stands alone)."""
    words = set(tokens(_core_name(gpu))) - _NEUTRAL
    if not words:
        return []
    mem_type = _MEMORY_TYPE.search(gpu.name)
    scored = []
    for card in cards:
        if card.vendor.lower() != gpu.vendor.lower():
            continue
        have = set(tokens(card.name))
        if not words <= have or not _memory_fits(card, gpu.memory_gib):
            continue
        if mem_type and (card.memory_type or "").lower() != mem_type.group(1).lower():
            continue
        extra = have - words - _NEUTRAL - {str(round(card.memory_gib))}
        scored.append((len(extra), card.name, card))
    scored.sort(key=lambda t: (t[0], t[1]))
    return [c for _, _, c in scored]


def match_card(gpu: DetectedGpu, cards: Sequence[Card]) -> tuple[Card | None, list[Card]]:
    """(the card, None when no single best one; the candidates considered)."""
    found = candidates(gpu, cards)
    if not found:
        return None, []
    words = set(tokens(_core_name(gpu))) - _NEUTRAL

    def extra(c: Card) -> int:
        return len(set(tokens(c.name)) - words - _NEUTRAL - {str(round(c.memory_gib))})

    if len(found) > 1 and extra(found[0]) == extra(found[1]):
        return None, found
    return found[0], found
