"""--hf REPO_ID: a model from the Hugging Face Hub, through one seam over `huggingface_hub`.

A repository with a config.json is read as --config (with model.safetensors.index.json when
present); a GGUF repository has its header fetched by HTTP range requests (a few MiB, never
the weights) and read as --gguf. Tests pass a `Hub` that answers from recordings.
"""
from __future__ import annotations

import io
import os
import re
import socket
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any, Protocol
from urllib.parse import urlsplit

from tpscalc.sources.files import parse_json
from tpscalc.sources.gguf_header import (
    SPLIT,
    GgufHeader,
    HeaderCutShort,
    TensorInfo,
    parse_header,
)
from tpscalc.sources.gguf_model import model_from_header
from tpscalc.sources.hf_config import model_from_config
from tpscalc.sources.types import SourcedModel, SourceError

FIRST_FETCH_BYTES = 2**20  # most headers fit; a 256k-token vocabulary needs a few MiB
MAX_HEADER_BYTES = 2**27
PREFERRED_GGUF = ("Q4_K_M", "Q8_0")  # which file of a many-quantization repository to read
REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


class Hub(Protocol):
    """What tpscalc asks the Hub: a repository's files, and a byte range of one of them."""

    def list_files(self, repo: str) -> list[str]: ...

    def read_range(self, repo: str, filename: str, start: int, length: int) -> bytes: ...


# Error codes that mean "the Hub could not be asked" (not "the Hub said no"): --hf then falls
# back to the catalog's entry for the repository, when it has one (sources/load.py).
UNREACHABLE = ("hub_offline", "hub_unreachable")
# Seconds to wait for a TCP connection to the Hub before saying it is unreachable: without
# this check, huggingface_hub retries a failed name lookup for ~30 s before giving up.
CONNECT_TIMEOUT_S = 3.0
_TRUE = frozenset({"1", "true", "yes", "on"})  # as huggingface_hub reads HF_HUB_OFFLINE
_PROXY_VARS = ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")

Connect = Callable[[tuple[str, int], float], Any]


def hub_address() -> tuple[str, int]:
    """The Hub's host and port (HF_ENDPOINT when set, else huggingface.co:443)."""
    where = urlsplit(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    return where.hostname or "huggingface.co", where.port or (
        80 if where.scheme == "http" else 443)


class HfHub:
    """The real Hub through huggingface_hub; its errors become one-line SourceErrors.

    Before the first request it fails fast: HF_HUB_OFFLINE set, or no TCP connection to the
    Hub within CONNECT_TIMEOUT_S (`connect`, socket.create_connection unless a test gives one;
    skipped behind a proxy, which the client reaches instead).
    """

    def __init__(self, api: Any = None, fs: Any = None, connect: Connect | None = None) -> None:
        self.api, self.fs = api, fs
        self.connect: Connect = connect or socket.create_connection
        self.checked = False

    def check_reachable(self, repo: str) -> None:
        """SourceError (a code in UNREACHABLE) when the Hub cannot be asked now."""
        if self.checked:
            return
        if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in _TRUE:
            raise SourceError(f"{repo}: HF_HUB_OFFLINE is set, so the Hub is not asked",
                              "hub_offline")
        if not any(os.environ.get(v) for v in _PROXY_VARS):
            host, port = hub_address()
            try:
                self.connect((host, port), CONNECT_TIMEOUT_S).close()
            except OSError as exc:
                reason = exc.strerror or str(exc) or type(exc).__name__
                raise SourceError(f"{repo}: the Hub ({host}) is not reachable: {reason}",
                                  "hub_unreachable") from None
        self.checked = True

    def _errors(self) -> tuple[type[Exception], ...]:
        """The Hub's answers (404, gated, offline) and transport failures (no network)."""
        from huggingface_hub.errors import HfHubHTTPError

        transport: type[Exception]
        try:  # huggingface_hub's HTTP client: httpx2 from 2.x, httpx before
            import httpx2

            transport = httpx2.HTTPError
        except ImportError:
            import httpx

            transport = httpx.HTTPError
        return (HfHubHTTPError, transport, OSError, ValueError)

    def list_files(self, repo: str) -> list[str]:
        self.check_reachable(repo)
        if self.api is None:
            from huggingface_hub import HfApi

            self.api = HfApi()
        try:
            return list(self.api.list_repo_files(repo))
        except self._errors() as exc:
            raise SourceError(f"{repo}: the Hub answers: {str(exc).splitlines()[0]}",
                              "unknown_repo") from None

    def read_range(self, repo: str, filename: str, start: int, length: int) -> bytes:
        self.check_reachable(repo)
        if self.fs is None:
            from huggingface_hub import HfFileSystem

            self.fs = HfFileSystem()
        try:
            return bytes(self.fs.read_block(f"{repo}/{filename}", start, length))
        except self._errors() as exc:
            raise SourceError(f"{repo}/{filename}: the Hub answers: "
                              f"{str(exc).splitlines()[0]}", "unknown_repo") from None


def _json(hub: Hub, repo: str, filename: str) -> dict[str, Any]:
    data = hub.read_range(repo, filename, 0, MAX_HEADER_BYTES)
    parsed = parse_json(data, f"{repo}/{filename}")
    if not isinstance(parsed, dict):
        raise SourceError(f"{repo}/{filename}: not a config object", "bad_config")
    return parsed


def _remote_header(hub: Hub, repo: str,
                   filename: str) -> tuple[int, dict[str, Any], list[TensorInfo], int]:
    """parse_header of a remote file, fetching more bytes while the header runs past them."""
    size = FIRST_FETCH_BYTES
    while True:
        data = hub.read_range(repo, filename, 0, size)
        try:
            return parse_header(io.BytesIO(data), filename)
        except HeaderCutShort:
            if len(data) < size or size >= MAX_HEADER_BYTES:
                raise
            size *= 4


def _first_shard(filename: str) -> bool:
    m = SPLIT.match(PurePosixPath(filename).name)
    return m is None or m.group("i") == "00001"


def _pick_gguf(files: list[str]) -> list[str]:
    """The shards of the GGUF to read: the preferred quantization, else the first file."""
    ggufs = sorted(f for f in files if f.endswith(".gguf"))
    firsts = [f for f in ggufs if _first_shard(f)]
    chosen = next((f for q in PREFERRED_GGUF for f in firsts if q.lower() in f.lower()), firsts[0])
    m = SPLIT.match(PurePosixPath(chosen).name)
    if not m:
        return [chosen]
    stem = chosen[: len(chosen) - len(PurePosixPath(chosen).name)] + m.group("stem")
    n = int(m.group("n"))
    return [f"{stem}-{i:05d}-of-{n:05d}.gguf" for i in range(1, n + 1)]


def read_hub(repo: str, hub: Hub | None = None) -> SourcedModel:
    """The model in Hub repository `repo` ("Qwen/Qwen3-8B"), from its config or GGUF header."""
    if not REPO_ID.match(repo):
        raise SourceError(f"{repo!r} is not a Hub repository id (owner/name)", "unknown_repo")
    h: Hub = hub if hub is not None else HfHub()
    files = h.list_files(repo)
    if "config.json" in files:
        cfg = _json(h, repo, "config.json")
        index_name = "model.safetensors.index.json"
        index = _json(h, repo, index_name) if index_name in files else None
        sm = model_from_config(cfg, f"{repo}/config.json", index, f"{repo}/{index_name}",
                               label=repo)
        return SourcedModel(sm.model.model_copy(update={"hf_repo": repo}), sm.sources)
    if any(f.endswith(".gguf") for f in files):
        shards = _pick_gguf(files)
        missing = [s for s in shards if s not in files]
        if missing:
            raise SourceError(f"{repo}: missing GGUF shard(s) {', '.join(missing[:3])}",
                              "bad_gguf")
        version, meta, tensors, header = _remote_header(h, repo, shards[0])
        for shard in shards[1:]:
            tensors += _remote_header(h, repo, shard)[2]
        header_of = GgufHeader(Path(repo, shards[0]), version, meta, tuple(tensors), header,
                               len(shards))
        return model_from_header(header_of)
    raise SourceError(f"{repo}: no config.json and no .gguf file in the repository", "bad_model")
