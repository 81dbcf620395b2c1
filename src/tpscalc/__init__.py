"""tpscalc: which graphics card runs which open-weight language model, and how fast."""
from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
