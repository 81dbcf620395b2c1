"""tpscalc: which graphics card runs which open-weight language model, and how fast."""
from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = ["__version__", "card_report", "detect_machine", "evaluate", "evaluate_many",
           "model_report", "report_json"]

_API = frozenset(__all__) - {"__version__"}


def __getattr__(name: str) -> Any:
    # The Python API is imported on first use, so `import tpscalc` loads no engine or catalog.
    if name in _API:
        from tpscalc import api

        return getattr(api, name)
    raise AttributeError(f"module 'tpscalc' has no attribute {name!r}")
