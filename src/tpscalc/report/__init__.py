"""The model report and the card report: one builder each, rendered as a table, JSON or HTML."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tpscalc.report.card_report import CardReport, build_card_report
    from tpscalc.report.model_report import ModelReport, build_model_report

__all__ = ["CardReport", "ModelReport", "build_card_report", "build_model_report"]

_WHERE = {"build_model_report": "model_report", "ModelReport": "model_report",
          "build_card_report": "card_report", "CardReport": "card_report"}


def __getattr__(name: str) -> Any:
    # Lazy, so that `import tpscalc.report` stays cheap for the CLI.
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(f"tpscalc.report.{_WHERE[name]}"), name)
    raise AttributeError(name)
