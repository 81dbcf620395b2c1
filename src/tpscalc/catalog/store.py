"""Load the committed catalog files lazily (first use), validate them, and cache them."""
from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from pydantic import ValidationError

from tpscalc.catalog.schema import Card, Model

DATA_PACKAGE = "tpscalc.catalog.data"


class CatalogError(RuntimeError):
    """A catalog file is missing or holds an impossible value."""


def read_json(filename: str) -> Any:
    """Parse one JSON file shipped in the package's data folder."""
    try:
        text = resources.files(DATA_PACKAGE).joinpath(filename).read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise CatalogError(f"catalog file {filename} is missing: run `make catalog`") from exc
    return json.loads(text)


def _validate(kind: type[Card | Model], rows: list[dict[str, Any]], filename: str) -> list[Any]:
    out = []
    for i, row in enumerate(rows):
        try:
            out.append(kind.model_validate(row))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise CatalogError(
                f"{filename} entry {i} ({row.get('name', '?')}): {where}: {first['msg']}"
            ) from exc
    return out


@cache
def cards() -> tuple[Card, ...]:
    """Every card in the catalog, in file order."""
    return tuple(_validate(Card, read_json("cards.json")["cards"], "cards.json"))


@cache
def models() -> tuple[Model, ...]:
    """Every model in the catalog, in file order."""
    return tuple(_validate(Model, read_json("models.json")["models"], "models.json"))


@cache
def weights_table() -> tuple[tuple[str, ...], dict[str, list[list[int]]]]:
    """(file types, slug → [[weights bytes, bytes read per token], ...]) from weights.json."""
    data = read_json("weights.json")
    return tuple(data["types"]), data["models"]


@cache
def ggml_block_sizes() -> dict[str, tuple[int, int]]:
    """ggml tensor type name → (values per block, bytes per block), from ggml_types.json
    (written by tools/build_ggml_types.py from gguf's GGML_QUANT_SIZES)."""
    types = read_json("ggml_types.json")["types"]
    return {name: (int(block), int(size)) for name, (block, size) in types.items()}
