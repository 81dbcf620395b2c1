"""Epoch AI's "Data on AI Models" rows, as typed records with snake_case keys.

Source: epoch.ai/data/ai-models (CC-BY 4.0), file all_ai_models.csv.
"""
from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import Any

# SPEC.md §6: open weights, language, with a parameter count. A newer CSV dropped into
# shared/data/sources/epoch holds more; fewer means the parse (or the file) is broken.
EXPECTED_OPEN_LANGUAGE_MODELS = 835

NUMBER_COLUMNS = frozenset({
    "Parameters", "Training compute (FLOP)", "Training dataset size (total)",
    "Training time (hours)", "Citations", "Epochs", "Finetune compute (FLOP)",
    "Hardware quantity", "Hardware utilization (MFU)", "Batch size",
    "Training compute lower bound", "Training compute upper bound", "Training chip-hours",
    "Training compute cost (2023 USD)", "Training power draw (W)",
    "Post-training compute (FLOP)", "Hardware utilization (HFU)",
})
BOOL_COLUMNS = frozenset({"Foundation model", "Possibly over 1e23 FLOP", "Frontier model",
                          "Open model weights?"})
# Categorical cells holding several values joined by "," with no space after it
# ("Hugging Face,ServiceNow,NVIDIA,BigCode"); ", " stays inside one value ("Systems, Inc").
LIST_COLUMNS = frozenset({
    "Domain", "Task", "Organization", "Country (of organization)", "Organization categorization",
    "Notability criteria", "Training hardware", "Training compute estimation method",
    "Base model", "Approach", "Training cloud compute vendor", "Numerical format",
    "WikiText and Penn Treebank data",
})
_LIST_SPLIT = re.compile(r",(?! )")
_URL = re.compile(r"https?://[^\s,]+|(?<![/\w])(?:arxiv\.org|huggingface\.co)/[^\s,]+")


def snake(column: str) -> str:
    """"Training compute (FLOP)" → "training_compute_flop"."""
    return re.sub(r"[^a-z0-9]+", "_", column.lower()).strip("_")


def clean_name(name: str) -> str:
    """The model name with whitespace and newlines collapsed."""
    return " ".join(name.split())


def _number(text: str) -> int | float:
    value = float(text.replace(",", ""))
    if value.is_integer() and abs(value) < 1e15:
        return int(value)
    return value


def _value(column: str, text: str) -> Any:
    text = text.strip()
    if not text:
        return None
    if column in NUMBER_COLUMNS:
        try:
            return _number(text)
        except ValueError:
            return text
    if column in BOOL_COLUMNS:
        return text.lower() in ("true", "yes")
    if column == "Last modified":  # "2026-01-03 05:46:22+00:00" → ISO 8601 with "T"
        return text.replace(" ", "T", 1)
    if column == "Link":
        return [u.rstrip(".;)") for u in _URL.findall(text)] or [text]
    if column == "Authors":
        return [a.strip() for a in text.split(",") if a.strip()]
    if column in LIST_COLUMNS:
        return [v.strip() for v in _LIST_SPLIT.split(text) if v.strip()]
    return text


def record(row: dict[str, str]) -> dict[str, Any]:
    """Every field of one Epoch row, snake_case keys, numbers, booleans, ISO dates, lists."""
    out = {snake(k): _value(k, v) for k, v in row.items()}
    out["model"] = clean_name(row["Model"])
    return out


def is_open_language_model(row: dict[str, str]) -> bool:
    """Domain includes Language, weights open, a parameter count given."""
    domains = _LIST_SPLIT.split(row.get("Domain", ""))
    return ("Language" in [d.strip() for d in domains]
            and row.get("Model accessibility", "").startswith("Open weights")
            and bool(row.get("Parameters", "").strip()))


def open_language_models(path: Path,
                         minimum: int = EXPECTED_OPEN_LANGUAGE_MODELS) -> list[dict[str, Any]]:
    """The records of every open-weight language model with a parameter count, file order."""
    with path.open(newline="", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if is_open_language_model(r)]
    if len(rows) < minimum:
        raise SystemExit(f"expected at least {minimum} models, found {len(rows)}")
    return [record(r) for r in rows]
