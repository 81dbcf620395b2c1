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


class _Connection:
    def close(self) -> None:
        pass


def _connected(address: tuple[str, int], timeout: float) -> _Connection:
    """A connection that succeeds (the Hub reachable) without the network."""
    return _Connection()


def test_an_unknown_repository_is_one_line_with_the_hubs_answer(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    # The error huggingface_hub raises for a 404 on /api/models/{repo}, as recorded.
    request = httpx2.Request("GET", "https://huggingface.co/api/models/nobody/nothing/tree/main")
    response = httpx2.Response(404, request=request, headers={"X-Error-Code": "RepoNotFound"})

    class Api:
        def list_repo_files(self, repo: str) -> list[str]:
            raise RepositoryNotFoundError("404 Client Error. Repository Not Found for url: "
                                          f"{request.url}.\nPlease make sure ...",
                                          response=response)

    with pytest.raises(SourceError, match="nobody/nothing: the Hub answers: 404") as exc:
        read_hub("nobody/nothing", HfHub(api=Api(), connect=_connected))
    assert "\n" not in str(exc.value)


def test_a_repository_without_config_or_gguf_is_refused() -> None:
    hub = RecordedHub({"me/readme-only": {"README.md": b"hello"}})
    with pytest.raises(SourceError, match="no config.json and no .gguf"):
        read_hub("me/readme-only", hub)


class UnreachableHub:
    """A Hub that cannot be asked (what HfHub raises with no network or HF_HUB_OFFLINE)."""

    def __init__(self, code: str = "hub_unreachable") -> None:
        self.code = code

    def list_files(self, repo: str) -> list[str]:
        raise SourceError(f"{repo}: the Hub (huggingface.co) is not reachable: no network",
                          self.code)

    def read_range(self, repo: str, filename: str, start: int, length: int) -> bytes:
        raise AssertionError("never reached")


@pytest.mark.parametrize("code", ["hub_unreachable", "hub_offline"])
def test_an_unreachable_hub_falls_back_to_the_catalog_with_a_note(code: str) -> None:
    out = api.evaluate(None, "4090", quant="Q4_K_M", hf="Qwen/Qwen3-8B", hub=UnreachableHub(code))
    catalog = api.evaluate("qwen3-8b", "4090", quant="Q4_K_M")
    assert out["memory"] == catalog["memory"] and out["decode"] == catalog["decode"]
    assert "not reachable" in out["sources"]["note"] and "Qwen3-8B" in out["sources"]["note"]


def test_an_unreachable_hub_and_no_catalog_entry_is_one_line() -> None:
    with pytest.raises(SourceError, match="not reachable.*the catalog has no entry") as caught:
        api.evaluate(None, "4090", hf="nobody/nothing", hub=UnreachableHub())
    assert caught.value.code == "hub_unreachable"


def test_a_hub_that_says_no_is_not_replaced_by_the_catalog() -> None:
    with pytest.raises(SourceError, match="404"):
        api.evaluate(None, "4090", hf="Qwen/Qwen3-8B", hub=RecordedHub({}))


def test_the_real_hub_fails_fast_without_a_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("HF_HUB_OFFLINE", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    asked: list[tuple[tuple[str, int], float]] = []

    def no_network(address: tuple[str, int], timeout: float) -> object:
        asked.append((address, timeout))
        raise OSError(-2, "Name or service not known")

    with pytest.raises(SourceError, match="not reachable: Name or service") as caught:
        HfHub(api=object(), connect=no_network).list_files("Qwen/Qwen3-8B")
    assert caught.value.code == "hub_unreachable"
    assert asked == [(("huggingface.co", 443), 3.0)]


def test_hf_hub_offline_is_honoured_without_a_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")

    def never(address: tuple[str, int], timeout: float) -> object:
        raise AssertionError("connected although HF_HUB_OFFLINE is set")

    with pytest.raises(SourceError, match="HF_HUB_OFFLINE") as caught:
        HfHub(api=object(), connect=never).list_files("Qwen/Qwen3-8B")
    assert caught.value.code == "hub_offline"
