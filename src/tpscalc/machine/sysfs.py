"""AMD and Intel GPUs from Linux sysfs (/sys/class/drm/card*/device), read under a root folder.

amdgpu exposes mem_info_vram_total / mem_info_vram_used (bytes) and, on most boards,
product_name; i915/xe expose no VRAM size there, so an Intel GPU is reported by its PCI id
with unknown memory. https://docs.kernel.org/gpu/amdgpu/driver-misc.html
"""
from __future__ import annotations

import re
from pathlib import Path

from tpscalc.machine.types import GIB, DetectedGpu

VENDORS = {"0x1002": ("AMD", "rocm"), "0x8086": ("Intel", "sycl")}
_CARD = re.compile(r"^card\d+$")


def _text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip() or None
    except OSError:
        return None


def _int(path: Path) -> int | None:
    text = _text(path)
    return int(text) if text and text.isdigit() else None


def _pcie(device: Path) -> str | None:
    speed, width = _text(device / "current_link_speed"), _text(device / "current_link_width")
    gen = {"2.5": 1, "5.0": 2, "8.0": 3, "16.0": 4, "32.0": 5, "64.0": 6}
    m = re.match(r"([0-9.]+) GT/s", speed or "")
    if not m or not width or m.group(1) not in gen:
        return None
    return f"PCIe {gen[m.group(1)]}.0 x{width}"


def detect_sysfs(root: Path = Path("/")) -> list[DetectedGpu]:
    """AMD and Intel GPUs under `root`/sys/class/drm (a recorded tree in tests)."""
    drm = root / "sys" / "class" / "drm"
    try:
        cards = sorted((p for p in drm.iterdir() if _CARD.match(p.name)), key=lambda p: p.name)
    except OSError:
        return []
    out, seen = [], set()
    for card in cards:
        device = card / "device"
        vendor_id = _text(device / "vendor")
        if vendor_id not in VENDORS:
            continue
        key = device.resolve()
        if key in seen:
            continue
        seen.add(key)
        vendor, backend = VENDORS[vendor_id]
        total, used = _int(device / "mem_info_vram_total"), _int(device / "mem_info_vram_used")
        name = _text(device / "product_name") or f"{vendor} GPU {_text(device / 'device')}"
        out.append(DetectedGpu(
            name=name, vendor=vendor, memory_gib=total / GIB if total else None,
            free_gib=(total - used) / GIB if total and used is not None else None,
            backend=backend, pcie=_pcie(device)))
    return out
