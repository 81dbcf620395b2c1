"""Validation of the catalog's records with pydantic, imported only where records are validated:
the catalog build (tools/), the JSON catalog when zz_catalog.pickle does not match it, a user's
model file. The constraints are the records' field metadata (schema._check)."""
from __future__ import annotations

from typing import Any, Literal, TypeVar

from pydantic import TypeAdapter, ValidationError

_R = TypeVar("_R")  # a record class of catalog/schema.py (not imported: it imports this module)

__all__ = ["ValidationError", "dump", "validate"]


_ADAPTERS: dict[type, TypeAdapter[Any]] = {}


def _adapter(cls: type) -> TypeAdapter[Any]:
    if cls not in _ADAPTERS:
        _ADAPTERS[cls] = TypeAdapter(cls)
    return _ADAPTERS[cls]


def validate(cls: type[_R], data: Any) -> _R:
    """The `cls` record that `data` (a dict) describes; ValidationError if none (a record
    of `cls` is returned as it is, as pydantic does)."""
    record: _R = _adapter(cls).validate_python(data)
    return record


def dump(record: object, *, mode: Literal["json", "python"] = "python",
         exclude: set[str] | None = None, exclude_defaults: bool = False) -> dict[str, Any]:
    """pydantic's dump of `record` (nested records as dicts)."""
    out: dict[str, Any] = _adapter(type(record)).dump_python(
        record, mode=mode, exclude=exclude, exclude_defaults=exclude_defaults)
    return out
