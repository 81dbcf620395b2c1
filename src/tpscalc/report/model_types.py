"""The model report's data: every figure a model page shows beyond the texts it shares with the
card page (types.py), as frozen dataclasses.

Built by `model_report.py`, turned into JSON by `serialize.py` and into HTML or a terminal table
by the renderers; nothing here computes or formats.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from tpscalc.catalog.frozen import FrozenValue
from tpscalc.catalog.schema import Card, Model
from tpscalc.estimate.types import Estimate, MemoryBreakdown
from tpscalc.report import record
from tpscalc.report.request import ReportRequest
from tpscalc.report.types import Text, fitting_tokens_per_s


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
    # the fastest card under every runtime that holds the model there, fastest first
    runtimes: tuple[Estimate, ...] = ()


@dataclass(frozen=True, eq=False, repr=False)
class ServingPoint(FrozenValue):
    """Aggregate and per-user decode of `parallel` users at once on one card, tokens/s."""

    gpu: str
    parallel: int
    quant: str
    aggregate_tokens_per_s: float
    per_user_tokens_per_s: float


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
    serving_curve: tuple[ServingPoint, ...] = ()  # the fastest card, N users at once

    @property
    def model(self) -> Model:
        """The model the report is about."""
        return self.summary.model
