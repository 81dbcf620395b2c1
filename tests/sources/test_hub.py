"""--hf: a Hub repository through the one seam, answered from recordings (never the network)."""
from __future__ import annotations

from pathlib import Path

import httpx2
import pytest
from huggingface_hub.errors import RepositoryNotFoundError

from tpscalc import api
from tpscalc.sources import SourceError
from tpscalc.sources.hub import HfHub, read_hub

DATA = Path(__file__).parent / "data"
GIB = 2**30


class RecordedHub:
    """A Hub whose repositories are folders of recorded files; counts the bytes it serves."""

    def __init__(self, repos: dict[str, dict[str, bytes]]) -> None:
        self.repos, self.served = repos, 0

    def list_files(self, repo: str) -> list[str]:
        if repo not in self.repos:
            raise SourceError(f"{repo}: the Hub answers: 404 Repository Not Found", "unknown_repo")
        return sorted(self.repos[repo])

    def read_range(self, repo: str, filename: str, start: int, length: int) -> bytes:
        data = self.repos[repo][filename][start: start + length]
        self.served += len(data)
        return data


def test_a_config_repository_reads_as_config() -> None:
    config = (DATA / "Qwen--Qwen3-8B_config.json").read_bytes()
    hub = RecordedHub({"Qwen/Qwen3-8B": {"config.json": config, "README.md": b"# Qwen3"}})
    mine = api.evaluate(None, "4090", quant="Q4_K_M", hf="Qwen/Qwen3-8B", hub=hub)
    catalog = api.evaluate("qwen3-8b", "4090", quant="Q4_K_M")
    assert mine["memory"]["kv_cache_gib"] == catalog["memory"]["kv_cache_gib"]
    assert mine["sources"]["kv_cache"] == "config Qwen/Qwen3-8B/config.json"


def test_a_gguf_repository_reads_only_the_header(tiny_gguf: tuple[Path, int],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    path, tensor_bytes = tiny_gguf
    monkeypatch.setattr("tpscalc.sources.hub.FIRST_FETCH_BYTES", 512)  # fetch in steps
    data = path.read_bytes()
    hub = RecordedHub({"me/tiny-GGUF": {"tiny-F32.gguf": data, "tiny-Q8_0.gguf": data}})
    sm = read_hub("me/tiny-GGUF", hub)
    assert sm.model.file_weights is not None
    assert sm.model.file_weights.bytes_stored == tensor_bytes
    assert "tiny-Q8_0.gguf" in sm.sources["weights"]
    assert hub.served < len(data)  # the tensor data was never fetched


def test_an_unknown_repository_is_one_line_with_the_hubs_answer() -> None:
    # The error huggingface_hub raises for a 404 on /api/models/{repo}, as recorded.
    request = httpx2.Request("GET", "https://huggingface.co/api/models/nobody/nothing/tree/main")
    response = httpx2.Response(404, request=request, headers={"X-Error-Code": "RepoNotFound"})

    class Api:
        def list_repo_files(self, repo: str) -> list[str]:
            raise RepositoryNotFoundError("404 Client Error. Repository Not Found for url: "
                                          f"{request.url}.\nPlease make sure ...",
                                          response=response)

    with pytest.raises(SourceError, match="nobody/nothing: the Hub answers: 404") as exc:
        read_hub("nobody/nothing", HfHub(api=Api()))
    assert "\n" not in str(exc.value)


def test_a_repository_without_config_or_gguf_is_refused() -> None:
    hub = RecordedHub({"me/readme-only": {"README.md": b"hello"}})
    with pytest.raises(SourceError, match="no config.json and no .gguf"):
        read_hub("me/readme-only", hub)
