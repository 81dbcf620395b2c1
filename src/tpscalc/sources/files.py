"""Reading the user's files with limits: a size cap, a nesting cap, finite numbers only.

Every file the tool reads may be a pipe, a device (`/dev/zero`) or a huge file by mistake;
each read here stops at a limit and says so in one line (a SourceError) instead of filling the
memory. A regular file over the limit is refused from its size, before anything is read.
"""
from __future__ import annotations

import json
import math
import os
import stat
from pathlib import Path
from typing import Any

from tpscalc.sources.types import SourceError

# config.json files are a few kB; the largest safetensors index (a 1T-parameter MoE with
# ~100,000 tensors) is ~10 MB.
MAX_JSON_BYTES = 16 * 2**20


def read_bounded(path: Path, limit_bytes: int, what: str) -> bytes:
    """The bytes of `path`, or SourceError when it holds more than `limit_bytes`."""
    try:
        with path.open("rb") as fh:
            info = os.fstat(fh.fileno())
            if stat.S_ISDIR(info.st_mode):
                raise SourceError(f"{path}: a folder, not {what}", "unreadable_file")
            if stat.S_ISREG(info.st_mode) and info.st_size > limit_bytes:
                raise too_large(path, what, limit_bytes)
            data = fh.read(limit_bytes + 1)  # a pipe or device: read one byte past the limit
    except OSError as exc:
        raise SourceError(f"cannot read {path}: {exc.strerror or exc}", "unreadable_file") from None
    if len(data) > limit_bytes:
        raise too_large(path, what, limit_bytes)
    return data


def too_large(path: Path, what: str, limit_bytes: int) -> SourceError:
    """The one-line error for a file over its limit."""
    return SourceError(f"{path}: larger than {limit_bytes // 2**20:,} MiB, too large for "
                       f"{what}", "file_too_large")


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is out of range")
    return value


def load_json_file(path: Path, what: str = "a JSON file") -> Any:
    """The JSON value in `path`: bounded in size and nesting, NaN/Infinity refused."""
    return parse_json(read_bounded(path, MAX_JSON_BYTES, what), path.name)


def parse_json(data: bytes, name: str) -> Any:
    """The JSON value of `data` (a file called `name`): nesting bounded by the interpreter's
    recursion limit, NaN, Infinity and numbers beyond a float refused (SourceError)."""
    try:
        return json.loads(data.decode("utf-8"), parse_constant=_refuse_constant,
                          parse_float=_finite_float)
    except UnicodeDecodeError as exc:
        raise SourceError(f"{name}: not UTF-8 JSON (byte {exc.start})", "bad_config") from None
    except RecursionError:
        raise SourceError(f"{name}: nested too deeply to be a config", "bad_config") from None
    except ValueError as exc:  # JSONDecodeError, NaN, 1e999, an integer of 5,000 digits
        raise SourceError(f"{name}: not JSON ({exc})".splitlines()[0], "bad_config") from None
