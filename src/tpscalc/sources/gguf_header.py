"""Read a GGUF file's header (metadata and tensor table) and nothing else.

The header sits at the start of the file; the tensor data follows it. Reading it with `struct`
from a plain file handle (not `gguf.GGUFReader`, which maps the whole file and checks the data
is there) means a partial download whose data is cut short reads the same as the full file.
Layout: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md (versions 2 and 3).
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from tpscalc.sources.bounds import MAX_TENSOR_DIM, MAX_TENSOR_ELEMENTS
from tpscalc.sources.types import SourceError

GGUF_MAGIC = b"GGUF"
MAX_DIMS = 4  # GGML_MAX_DIMS
# Sanity bounds that tell a corrupt header from a real one (the largest real files hold a few
# thousand tensors and a 256k-token vocabulary).
MAX_COUNT = 10_000_000
MAX_STRING_BYTES = 64 * 2**20
LONG_ARRAY = 1024  # arrays longer than this (the vocabulary) keep only their length
MAX_TENSORS = 200_000  # real files hold a few thousand (experts fused into one tensor)
MAX_ARRAY_DEPTH = 8  # arrays of arrays: real files nest one level (none nest at all today)
# The header of the largest real files (a 262k-token vocabulary with scores and merges) is
# tens of MB; past this the file is corrupt or hostile.
MAX_HEADER_BYTES = 512 * 2**20
SPLIT = re.compile(r"^(?P<stem>.*)-(?P<i>\d{5})-of-(?P<n>\d{5})\.gguf$")
# GGUFValueType: struct formats of the scalar types; 8 is a string, 9 an array.
_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q",
            12: "d"}
_STRING, _ARRAY = 8, 9


@dataclass(frozen=True)
class LongArray:
    """An array value kept only by its length (a tokenizer's token list)."""

    length: int


@dataclass(frozen=True)
class TensorInfo:
    """One tensor of the table: name, shape (ggml order, fastest first), ggml type, bytes."""

    name: str
    shape: tuple[int, ...]
    type_name: str
    n_elements: int
    n_bytes: int


@dataclass(frozen=True)
class GgufHeader:
    """The metadata and the tensor table of one GGUF file (all shards of a split file)."""

    path: Path
    version: int
    metadata: dict[str, Any]
    tensors: tuple[TensorInfo, ...]
    header_bytes: int  # of the first shard: where its tensor table ends
    shards: int = 1


class HeaderCutShort(SourceError):
    """The bytes end inside the header (a reader of a remote file fetches more and retries)."""


class _Reader:
    """Little- or big-endian reads from a file handle; EOF or absurd sizes are SourceError."""

    def __init__(self, fh: BinaryIO, name: str, endian: str) -> None:
        self.fh, self.name, self.endian = fh, name, endian
        self.read_bytes = 0

    def raw(self, n: int) -> bytes:
        self.read_bytes += n
        if self.read_bytes > MAX_HEADER_BYTES:
            raise SourceError(f"{self.name}: corrupt GGUF header (longer than "
                              f"{MAX_HEADER_BYTES // 2**20} MiB)", "bad_gguf")
        data = self.fh.read(n)
        if len(data) != n:
            raise HeaderCutShort(f"{self.name}: the GGUF header is cut short or corrupt",
                                 "bad_gguf")
        return data

    def scalar(self, fmt: str) -> Any:
        return struct.unpack(self.endian + fmt, self.raw(struct.calcsize(fmt)))[0]

    def count(self, what: str) -> int:
        n = int(self.scalar("Q"))
        if n > MAX_COUNT:
            raise SourceError(f"{self.name}: corrupt GGUF header ({what} {n:,})", "bad_gguf")
        return n

    def string(self) -> str:
        n = int(self.scalar("Q"))
        if n > MAX_STRING_BYTES:
            raise SourceError(f"{self.name}: corrupt GGUF header (a string of {n:,} bytes)",
                              "bad_gguf")
        return self.raw(n).decode("utf-8", errors="replace")

    def value(self, vtype: int, depth: int = 0) -> Any:
        if vtype in _SCALARS:
            return self.scalar(_SCALARS[vtype])
        if vtype == _STRING:
            return self.string()
        if vtype == _ARRAY:
            if depth >= MAX_ARRAY_DEPTH:
                raise SourceError(f"{self.name}: corrupt GGUF header (arrays nested more than "
                                  f"{MAX_ARRAY_DEPTH} deep)", "bad_gguf")
            item_type, n = int(self.scalar("I")), self.count("array length")
            if n > LONG_ARRAY:  # read past the items without keeping them
                for _ in range(n):
                    self.value(item_type, depth + 1)
                return LongArray(n)
            return tuple(self.value(item_type, depth + 1) for _ in range(n))
        raise SourceError(f"{self.name}: corrupt GGUF header (value type {vtype})", "bad_gguf")


def _tensor(r: _Reader) -> TensorInfo:
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

    name = r.string()
    n_dims = int(r.scalar("I"))
    if not 0 < n_dims <= MAX_DIMS:
        raise SourceError(f"{r.name}: corrupt GGUF header (tensor {name!r} has {n_dims} "
                          "dimensions)", "bad_gguf")
    shape = tuple(int(r.scalar("Q")) for _ in range(n_dims))
    type_id = int(r.scalar("I"))
    r.scalar("Q")  # offset of the data: not needed for sizes
    try:
        qtype = GGMLQuantizationType(type_id)
        block, size = GGML_QUANT_SIZES[qtype]
    except (ValueError, KeyError):
        raise SourceError(f"{r.name}: tensor {name!r} has ggml type {type_id}, which this "
                          "version of the gguf package does not know", "bad_gguf") from None
    n = 1
    for d in shape:
        n *= d
    if max(shape) > MAX_TENSOR_DIM or n > MAX_TENSOR_ELEMENTS:
        raise SourceError(f"{r.name}: tensor {name!r} has an impossible shape "
                          f"{' x '.join(map(str, shape))} (at most {MAX_TENSOR_ELEMENTS:,} "
                          "values)", "bad_gguf")
    if shape[0] % block:
        raise SourceError(f"{r.name}: corrupt GGUF header (tensor {name!r}: {shape[0]} values "
                          f"per row do not fill {qtype.name} blocks of {block})", "bad_gguf")
    return TensorInfo(name, shape, qtype.name, n, n // block * size)


def parse_header(fh: BinaryIO, name: str) -> tuple[int, dict[str, Any], list[TensorInfo], int]:
    """(version, metadata, tensors, header bytes) read from `fh` at its start."""
    if fh.read(4) != GGUF_MAGIC:
        raise SourceError(f"{name}: not a GGUF file (it does not start with 'GGUF')", "bad_gguf")
    version_bytes = fh.read(4)
    endian = "<"
    version = struct.unpack("<I", version_bytes)[0] if len(version_bytes) == 4 else 0
    if version > 0xFFFF:  # written on a big-endian machine
        endian, version = ">", struct.unpack(">I", version_bytes)[0]
    if version not in (2, 3):
        raise SourceError(f"{name}: GGUF version {version} is not supported (2 or 3)", "bad_gguf")
    r = _Reader(fh, name, endian)
    n_tensors, n_kv = r.count("tensor count"), r.count("metadata count")
    if n_tensors > MAX_TENSORS:
        raise SourceError(f"{name}: corrupt GGUF header (tensor count {n_tensors:,})", "bad_gguf")
    meta: dict[str, Any] = {}
    for _ in range(n_kv):
        key = r.string()
        meta[key] = r.value(int(r.scalar("I")))
    tensors = [_tensor(r) for _ in range(n_tensors)]
    return version, meta, tensors, fh.tell()


def _read_one(path: Path) -> tuple[int, dict[str, Any], list[TensorInfo], int]:
    """(version, metadata, tensors, header bytes) of one file."""
    try:
        with path.open("rb") as fh:
            return parse_header(fh, path.name)
    except OSError as exc:
        raise SourceError(f"cannot read {path}: {exc.strerror or exc}", "unreadable_file") from None


def shard_paths(path: Path) -> list[Path]:
    """Every shard of a split GGUF (`name-00001-of-00003.gguf`), or just `path`."""
    m = SPLIT.match(path.name)
    if not m:
        return [path]
    n = int(m.group("n"))
    return [path.with_name(f"{m.group('stem')}-{i:05d}-of-{n:05d}.gguf") for i in range(1, n + 1)]


def read_header(path: Path) -> GgufHeader:
    """The header of the GGUF at `path`, all shards of a split file together (SourceError)."""
    paths = shard_paths(Path(path))
    if Path(path).is_dir():
        raise SourceError(f"{path}: a folder, not a GGUF file", "unreadable_file")
    odd = [p for p in paths if p.exists() and not p.is_file()]
    if odd:
        raise SourceError(f"{odd[0]}: not a regular file (a GGUF is read from a file)",
                          "unreadable_file")
    missing = [p.name for p in paths if not p.is_file()]
    if missing:
        raise SourceError(f"{path}: missing GGUF file(s) {', '.join(missing[:3])}"
                          + (" (a split file needs every shard's header)"
                             if len(paths) > 1 else ""), "unreadable_file")
    version, meta, tensors, header = _read_one(paths[0])
    for shard in paths[1:]:
        tensors += _read_one(shard)[2]
    return GgufHeader(paths[0], version, meta, tuple(tensors), header, len(paths))
