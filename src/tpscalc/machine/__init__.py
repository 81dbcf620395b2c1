"""The user's machine: its GPUs (NVIDIA, AMD, Intel, Apple), system RAM and CPU, as a `Rig`.

Each detector reads its source through one seam (an NVML object, a sysfs root, a command
runner) that tests replace with recordings of real machines; `detect()` puts them together and
matches each device to a catalog card.
"""
from __future__ import annotations

from tpscalc.machine.detect import Machine, detect

__all__ = ["Machine", "detect"]
