"""Load the committed catalog files lazily (first use), validate them, and cache them.

Cards and models come from catalog.pickle when it matches cards.json and models.json (their
CRC-32s are in it): the same records, validated when tools/build_compact.py wrote them, rebuilt
without validating again (a CLI answer spends ~50 ms less). Otherwise from the JSON, validated.
"""
from __future__ import annotations

import json
import pickle
import typing
import zlib
from functools import cache
from importlib import resources
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from tpscalc.catalog.schema import Card, Cpu, Model

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


COMPACT_FILE = "catalog.pickle"
COMPACT_SOURCES = ("cards.json", "models.json")
_M = TypeVar("_M", bound=BaseModel)


def source_crcs() -> dict[str, int]:
    """CRC-32 of each JSON file the compact catalog is built from."""
    data = resources.files(DATA_PACKAGE)
    return {name: zlib.crc32(data.joinpath(name).read_bytes()) for name in COMPACT_SOURCES}


def compact_rows(items: tuple[BaseModel, ...]) -> list[list[Any]]:
    """Records as the compact catalog keeps them: [field values, names of the fields given],
    nested records the same way, so a record rebuilt from them equals the validated one."""
    return [_compact_row(item) for item in items]


def _compact_row(item: BaseModel) -> list[Any]:
    values = dict(item.__dict__)
    for name, _ in _nested(type(item)):
        if values[name] is not None:
            values[name] = _compact_row(values[name])
    return [values, sorted(item.__pydantic_fields_set__)]


@cache
def _nested(cls: type[BaseModel]) -> tuple[tuple[str, type[BaseModel]], ...]:
    """(field, record type) for the fields of `cls` that hold a record (or None)."""
    out = []
    for name, info in cls.model_fields.items():
        for arg in (info.annotation, *typing.get_args(info.annotation)):
            if isinstance(arg, type) and issubclass(arg, BaseModel):
                out.append((name, arg))
    return tuple(out)


def construct(cls: type[_M], row: list[Any]) -> _M:
    """The record a compact row describes, without validation (it was validated when written):
    the state pickle itself would restore."""
    values, given = row
    for name, kind in _nested(cls):
        if values[name] is not None:
            values[name] = construct(kind, values[name])
    item = cls.__new__(cls)
    item.__setstate__({"__dict__": values, "__pydantic_fields_set__": set(given),
                       "__pydantic_extra__": None, "__pydantic_private__": None})
    return item


@cache
def _compact() -> dict[str, Any] | None:
    """The compact catalog's rows, or None when it is missing or does not match the JSON."""
    try:
        raw = resources.files(DATA_PACKAGE).joinpath(COMPACT_FILE).read_bytes()
    except FileNotFoundError:
        return None
    data = pickle.loads(raw)  # our own build output, shipped in the package
    return data if isinstance(data, dict) and data.get("crc32") == source_crcs() else None


@cache
def cards() -> tuple[Card, ...]:
    """Every card in the catalog, in file order."""
    compact = _compact()
    if compact is not None:
        return tuple(construct(Card, row) for row in compact["cards"])
    return tuple(_validate(Card, read_json("cards.json")["cards"], "cards.json"))


@cache
def models() -> tuple[Model, ...]:
    """Every model in the catalog, in file order."""
    compact = _compact()
    if compact is not None:
        return tuple(construct(Model, row) for row in compact["models"])
    return tuple(_validate(Model, read_json("models.json")["models"], "models.json"))


def validated_cards() -> tuple[Card, ...]:
    """Every card from cards.json, validated (the compact catalog's source)."""
    return tuple(_validate(Card, read_json("cards.json")["cards"], "cards.json"))


def validated_models() -> tuple[Model, ...]:
    """Every model from models.json, validated (the compact catalog's source)."""
    return tuple(_validate(Model, read_json("models.json")["models"], "models.json"))


@cache
def cpus() -> tuple[Cpu, ...]:
    """Every CPU of cpus.json (tools/build_cpus.py), validated, in file order."""
    rows = read_json("cpus.json")["cpus"]
    try:
        return tuple(Cpu.model_validate(row) for row in rows)
    except ValidationError as exc:
        raise CatalogError(f"cpus.json: {exc}") from None


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
