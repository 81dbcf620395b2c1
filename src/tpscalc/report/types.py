"""The report data: every figure a card page shows, and the texts a model page shares with it,
as frozen dataclasses (the model page's own: model_types.py, which a card page does not import).

Built by `model_report.py` and `card_report.py`, turned into JSON by `serialize.py` and into
HTML or a terminal table by the renderers; nothing here computes or formats.
"""
from __future__ import annotations

from dataclasses import dataclass

from tpscalc.catalog.frozen import FrozenValue
from tpscalc.catalog.schema import Card, Model
from tpscalc.estimate.types import Estimate
from tpscalc.report.request import ReportRequest


def fitting_tokens_per_s(e: Estimate) -> float:
    """Estimated decode speed, tokens/s (0 when it does not fit)."""
    return e.decode.tokens_per_s if (e.decode and e.fits) else 0.0


@dataclass(frozen=True, eq=False, repr=False)
class Text(FrozenValue):
    """A titled paragraph (explanation, guide step, FAQ entry), already translated."""

    title: str
    body: str


@dataclass(frozen=True, eq=False, repr=False)
class ModelRow(FrozenValue):
    """One model evaluated on the card."""

    model: Model
    estimate: Estimate
    # The model's own context limit when it is shorter than the report's context: the row was
    # evaluated at this many tokens instead (None: evaluated at the report's context).
    max_context: int | None = None
    # True when the report asked for a context (not the default) this model cannot hold: the row
    # does not answer the question, so it is left out of the counts and shown only with --all.
    left_out: bool = False
    # The most users at the request's users_at tok/s each (None: not asked; estimate/serving.py)
    users: int | None = None

    @property
    def tokens_per_s(self) -> float:
        """Estimated decode speed, tokens/s (0 when it does not fit)."""
        return fitting_tokens_per_s(self.estimate)

    @property
    def counts(self) -> bool:
        """Whether the row answers the report's question and fits (it counts as runnable)."""
        return self.estimate.fits and not self.left_out


@dataclass(frozen=True, eq=False, repr=False)
class CardReport(FrozenValue):
    """Everything the card page shows, in one language."""

    card: Card
    request: ReportRequest
    models_total: int
    models_fit: int
    reading_speed_models: int
    biggest: ModelRow | None  # most parameters among the models that fit
    fastest: ModelRow | None
    rows: tuple[ModelRow, ...]
    faq: tuple[Text, ...]
    notes: tuple[str, ...]
    models_beyond_limit: int = 0  # models left out: the report's context exceeds their limit
    # the biggest model it runs under every runtime that holds it here, fastest first
    runtimes: tuple[Estimate, ...] = ()
