"""The one conditional of the formulas written over a float or a column of rows alike.

The rig formulas (rig_engine's composition of a token's stages, host.paged_bytes) run on one
row's floats (a single answer, which never loads numpy) and on a report's numpy columns of
rows (rig_batch): the same operations in the same order, so the same floats. A branch in them
is `where`, which picks per row on an array and is a plain conditional on a float.
"""
from __future__ import annotations

from typing import Any

# A float, or a numpy array of floats with one entry per row (typed loosely: this module is
# below numpy's import and must not load it)
Num = Any


def where(cond: Any, a: Any, b: Any) -> Any:
    """`a` where `cond` holds, else `b`: a bool's conditional, a boolean array's per-row pick
    (numpy's choose: `cond` indexes (b, a))."""
    if isinstance(cond, bool):
        return a if cond else b
    return cond.choose((b, a))
