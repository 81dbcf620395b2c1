"""The report data: every figure a model or card page shows, as frozen dataclasses.

Built by `model_report.py` and `card_report.py`, turned into JSON by `serialize.py` and into
HTML or a terminal table by the renderers; nothing here computes or formats.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from tpscalc.catalog.frozen import FrozenValue
from tpscalc.catalog.schema import Card, Model
from tpscalc.estimate.types import Estimate, MemoryBreakdown
from tpscalc.report import record
from tpscalc.report.request import ReportRequest


def fitting_tokens_per_s(e: Estimate) -> float:
    """Estimated decode speed, tokens/s (0 when it does not fit)."""
    return e.decode.tokens_per_s if (e.decode and e.fits) else 0.0


@dataclass(frozen=True, eq=False, repr=False)
class Row(FrozenValue):
    """One card evaluated against one model (or one model on one card)."""

    card: Card
    estimate: Estimate

    @property
    def tokens_per_s(self) -> float:
        """Estimated decode speed, tokens/s (0 when it does not fit)."""
        return fitting_tokens_per_s(self.estimate)

    @property
    def needs_gib(self) -> float:
        """Memory needed on the card, GiB."""
        return self.estimate.memory.total_gib


@dataclass(frozen=True, eq=False, repr=False)
class ContextPoint(FrozenValue):
    """Memory needed and speed of one card at one context length (tokens)."""

    role: str  # "fastest" or "typical"
    gpu: str
    context: int
    quant: str | None
    needs_gib: float
    kv_cache_gib: float
    tokens_per_s: float | None
    fits: bool


@dataclass(frozen=True, eq=False, repr=False)
class DepthPoint(FrozenValue):
    """Decode and prefill speed of one card after `depth` cached tokens (llama-bench's pp512 and
    tg128 at -d depth), at the quantization the card runs the model at."""

    role: str  # "fastest", "typical" or "apple"
    gpu: str
    slug: str
    depth: int
    quant: str | None
    decode_tokens_per_s: float | None
    prefill_tokens_per_s: float | None
    fits: bool


@dataclass(frozen=True, eq=False, repr=False)
class KvPoint(FrozenValue):
    """KV cache and total memory at one context length for one quantization, GiB."""

    context: int
    quant: str
    memory: MemoryBreakdown


@dataclass(frozen=True, eq=False, repr=False)
class Text(FrozenValue):
    """A titled paragraph (explanation, guide step, FAQ entry), already translated."""

    title: str
    body: str


@dataclass(frozen=True, eq=False, repr=False)
class ModelSummary(FrozenValue):
    """Figures computed over every card, before the user's row filters."""

    model: Model
    request: ReportRequest
    cards_total: int
    cards_fit: int
    fastest: Row | None
    smallest: Row | None
    median_tokens_per_s: float | None
    reading_speed_cards: int
    fastest_ten: tuple[Row, ...]
    smallest_cards: tuple[Row, ...]
    closest_miss: Row | None
    quant_levels: tuple[str, ...]
    by_size: tuple[tuple[int, Row | None, Row | None], ...]  # size, best fit, closest miss
    kv_points: tuple[KvPoint, ...] = ()


@dataclass(frozen=True, eq=False, repr=False)
class ModelReport(FrozenValue):
    """Everything the model page shows, in one language."""

    summary: ModelSummary
    rows: tuple[Row, ...]  # after filters, sorted by speed
    context_curve: tuple[ContextPoint, ...]
    record: tuple[record.RecordSection, ...]
    explanations: tuple[Text, ...]
    guide: tuple[Text, ...]
    faq: tuple[Text, ...]
    notes: tuple[str, ...] = field(default=())
    depth_curve: tuple[DepthPoint, ...] = ()

    @property
    def model(self) -> Model:
        """The model the report is about."""
        return self.summary.model



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
