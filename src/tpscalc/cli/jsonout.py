"""`json.dumps(data, ensure_ascii=False, indent=1)`, byte for byte, about three times faster.

With `indent`, the standard library falls back to its pure-Python encoder; a model report (850
rows) then takes longer to print than to load the catalog. Here the containers are laid out in
Python and every scalar goes through the C string encoder or `repr`, as `json` does itself.
"""
from __future__ import annotations

import json
import math
from json.encoder import encode_basestring
from typing import Any

_FLOAT_SPECIAL = {float("inf"): "Infinity", float("-inf"): "-Infinity"}


def _scalar(value: Any) -> str | None:
    """The JSON text of a scalar as `json.dumps` writes it, else None (not a plain scalar)."""
    kind = type(value)
    if kind is str:
        return str(encode_basestring(value))
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if kind is int:
        return int.__repr__(value)
    if kind is float:
        if math.isnan(value):
            return "NaN"
        return _FLOAT_SPECIAL.get(value) or float.__repr__(value)
    return None


def _key(key: Any) -> str | None:
    """A dict key as `json.dumps` writes it (str, or a scalar turned into a string)."""
    if type(key) is str:
        return str(encode_basestring(key))
    if key is None or type(key) in (bool, int, float):
        text = _scalar(key)
        return None if text is None else str(encode_basestring(text))
    return None


# (keys, level) -> what precedes each value of a dict with those keys at that depth
# ('{\n  "name": ', ',\n  "slug": ', ...): a report's ~1,000 rows share a few key sequences.
_HEADS: dict[tuple[tuple[Any, ...], int], tuple[str, ...]] = {}
HEADS_KEPT = 4096


def _heads(keys: tuple[Any, ...], level: int) -> tuple[str, ...]:
    heads = _HEADS.get((keys, level))
    if heads is None:
        inner = _indent(level + 1)
        texts = [_key(k) for k in keys]
        if any(t is None for t in texts):
            raise _Fallback
        heads = tuple(("{" if i == 0 else ",") + inner + f"{t}: " for i, t in enumerate(texts))
        # only string keys: 1, 1.0 and True are equal keys but written "1", "1.0", "true"
        if len(_HEADS) < HEADS_KEPT and all(type(k) is str for k in keys):
            _HEADS[keys, level] = heads
    return heads


class _Fallback(Exception):
    """A value this module does not lay out itself: use json.dumps for the whole document."""


_INDENT = ["\n" + " " * n for n in range(64)]


def _indent(level: int) -> str:
    return _INDENT[level] if level < len(_INDENT) else "\n" + " " * level


def _write(value: Any, level: int, out: list[str]) -> None:
    # The scalars inside containers are written inline (a report has ~20,000 of them); each
    # branch writes what _scalar would.
    kind = type(value)
    if kind is dict:
        if not value:
            out.append("{}")
            return
        append = out.append
        for head, v in zip(_heads(tuple(value), level), value.values()):
            t = type(v)
            if t is str:
                append(head + encode_basestring(v))
            elif t is float and v - v == 0.0:  # finite
                append(head + float.__repr__(v))
            elif t is int:
                append(head + int.__repr__(v))
            elif v is None:
                append(head + "null")
            elif t is bool:  # ~2,000 flags in a card report
                append(head + ("true" if v else "false"))
            else:
                append(head)
                _write(v, level + 1, out)
        out.append(_indent(level) + "}")
    elif kind is list or kind is tuple:
        if not value:
            out.append("[]")
            return
        inner = _indent(level + 1)
        sep = "[" + inner
        append = out.append
        for v in value:
            t = type(v)
            if t is str:
                append(sep + encode_basestring(v))
            elif t is float and v - v == 0.0:
                append(sep + float.__repr__(v))
            elif t is int:
                append(sep + int.__repr__(v))
            else:
                append(sep)
                _write(v, level + 1, out)
            sep = "," + inner
        out.append(_indent(level) + "]")
    else:
        text = _scalar(value)
        if text is None:
            raise _Fallback
        out.append(text)


def dumps(data: Any) -> str:
    """`json.dumps(data, ensure_ascii=False, indent=1)`."""
    out: list[str] = []
    try:
        _write(data, 0, out)
    except (_Fallback, RecursionError):
        return json.dumps(data, ensure_ascii=False, indent=1)
    return "".join(out)
