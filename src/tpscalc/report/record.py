"""The model's Epoch AI record grouped into the sections of the model page (SPEC §1.7)."""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tpscalc.catalog.frozen import FrozenValue
from tpscalc.catalog.schema import Model
from tpscalc.i18n import format_number

# Keys of `Model.record`: Epoch AI's "Data on AI Models" columns (epoch.ai/data/ai-models) in
# snake_case, as tools/ writes them; each with the English label the page shows.
SECTIONS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    ("Origin", (("organization", "Organization"),
                ("organization_categorization", "Organization type"),
                ("country_of_organization", "Country"), ("publication_date", "Published"),
                ("authors", "Authors"))),
    ("What it does", (("domain", "Domain"), ("task", "Task"), ("base_model", "Base model"))),
    ("Size", (("parameters", "Parameters"), ("training_dataset_size_total", "Training data"),
              ("epochs", "Epochs"), ("batch_size", "Batch size"))),
    ("Training compute", (("training_compute_flop", "Training compute"),
                          ("training_compute_estimation_method", "How it was established"),
                          ("finetune_compute_flop", "Fine-tuning compute"),
                          ("training_hardware", "Training hardware"),
                          ("training_time_hours", "Training time (hours)"))),
    ("Availability", (("open_model_weights", "Weights"), ("model_accessibility", "Model access"),
                      ("training_code_accessibility", "Training code"),
                      ("accessibility_notes", "Notes"),
                      # models after Epoch's last record (tools/recent_models.py)
                      ("published_formats", "Published formats"))),
    ("Classification", (("possibly_over_1e23_flop", "Likely above 10^23 FLOP"),
                        ("confidence", "Record confidence"), ("citations", "Citations"),
                        ("notability_criteria", "Notability criteria"))),
    ("Sources", (("reference", "Reference"), ("link", "Link"), ("last_modified", "Last updated"),
                 ("hugging_face_checkpoints", "Hugging Face checkpoints"))),
)
FLOP_FIELDS = frozenset({"training_compute_flop", "finetune_compute_flop"})


@dataclass(frozen=True, eq=False, repr=False)
class RecordField(FrozenValue):
    """One field of the record: its translated label and its value as text."""

    name: str
    value: str


@dataclass(frozen=True, eq=False, repr=False)
class RecordSection(FrozenValue):
    """A titled group of record fields."""

    title: str
    fields: tuple[RecordField, ...]


def field(model: Model, name: str) -> Any:
    """One Epoch field of `model` (None when empty)."""
    value = model.record.get(name)
    if value in ("", None, [], ()):
        return None
    return value


# Epoch's category values the page translates (organization type, record confidence, domain);
# any other value is shown as recorded ("Language", the domain, too: its msgid is the page's
# language switch).
CATEGORY_VALUES = frozenset({"Industry", "Academia", "Research collective", "Government",
                             "Confident", "Likely", "Speculative", "Unknown",
                             "Vision", "Multimodal", "Video", "Speech", "Image generation",
                             "Medicine"})
_ISO_TIME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?"
                       r"(?:Z|[+-]\d{2}:?\d{2})?)?$")
_WHOLE = re.compile(r"^\d{4,}$")  # a count written as text ("15000000000"), not a year


def _same(text: str) -> str:
    return text


def as_text(value: Any, lang: str = "en", gettext: Callable[[str], str] = _same) -> str:
    """A record value as one line of text in `lang` (lists joined by ", "): counts with the
    locale's separators, Yes/No, categories and ISO dates and timestamps translated."""
    if isinstance(value, (list, tuple)):
        return ", ".join(dict.fromkeys(as_text(str(v).strip(), lang, gettext)
                                       for v in value if str(v).strip()))
    if isinstance(value, str) and "," in value and ", " not in value:
        return ", ".join(dict.fromkeys(as_text(p.strip(), lang, gettext)
                                       for p in value.split(",") if p.strip()))
    if isinstance(value, bool):
        return gettext("Yes") if value else gettext("No")
    if isinstance(value, (int, float)) and float(value).is_integer():
        return format_number(int(value), lang)
    if isinstance(value, str):
        if value in CATEGORY_VALUES:
            return gettext(value)
        if _WHOLE.match(value) and len(value) > 4:
            return format_number(int(value), lang)
        found = _ISO_TIME.match(value)
        if found:
            year, month, day = (int(g) for g in found.groups())
            return format_day(year, month, day, lang)
    return str(value)


def format_day(year: int, month: int, day: int, lang: str) -> str:
    """A date as the locale writes it ("Nov 28, 2025", "28 nov 2025"); CLDR's medium format."""
    from datetime import date

    from babel.dates import format_date

    try:
        return str(format_date(date(year, month, day), format="medium", locale=lang))
    except ValueError:  # not a calendar date: as recorded
        return f"{year:04d}-{month:02d}-{day:02d}"


def text_field(model: Model, name: str, lang: str = "en",
               gettext: Callable[[str], str] = _same) -> str | None:
    """`field` as text in `lang`, or None."""
    value = field(model, name)
    return None if value is None else as_text(value, lang, gettext)


def number_field(model: Model, name: str) -> float | None:
    """A numeric Epoch field, or None when missing or not a number."""
    value = field(model, name)
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


def flop_text(value: float) -> str:
    """A FLOP count as "3.9 × 10²³ FLOP"."""
    mantissa, exponent = f"{value:.1e}".split("e")
    sup = str(int(exponent)).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return f"{mantissa} × 10{sup} FLOP"


def sections(model: Model, gettext: Callable[[str], str],
             lang: str = "en") -> tuple[RecordSection, ...]:
    """The record's non-empty fields, grouped and labelled in the report's language `lang`."""
    out = []
    for title, names in SECTIONS:
        fields = []
        for key, label in names:
            if key in FLOP_FIELDS:
                value = number_field(model, key)
                text = flop_text(value) if value else None
            else:
                text = text_field(model, key, lang, gettext)
            if text and key == "parameters":
                text = _parameters_text(model, text, gettext, lang)
            if text:
                fields.append(RecordField(gettext(label), text))
        if fields:
            out.append(RecordSection(gettext(title), tuple(fields)))
    return tuple(out)


def _parameters_text(model: Model, recorded: str, gettext: Callable[[str], str],
                     lang: str = "en") -> str:
    """Epoch's parameter count, with the architecture's beside it when they differ by over 1 %
    (the pages' other figures use the architecture's: it is what the weights hold)."""
    counted = model.parameters_total
    if abs(counted - model.parameters) <= 0.01 * model.parameters:
        return recorded
    return gettext("{recorded} as recorded; {counted} counted from the architecture's tensors, "
                   "which the other figures on this page use").format(
                       recorded=recorded, counted=format_number(int(counted), lang))
