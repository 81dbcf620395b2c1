"""Pages, JSON and CLI output stay byte-identical to the record unless a change is intended."""
from __future__ import annotations

import difflib
import gzip
import importlib.util
import json
from pathlib import Path

import pytest

HERE = Path(__file__).parent


def _sample():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("golden_sample", HERE / "sample.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _lines(data: bytes) -> list[str]:
    """The output as lines to diff; a one-line JSON body is spread one key a line first."""
    head, _, body = data.decode(errors="replace").partition("\n")
    try:
        body = json.dumps(json.loads(body), indent=1, ensure_ascii=False)
    except ValueError:
        pass
    return [head, *body.splitlines()]


@pytest.fixture(scope="module")
def live() -> dict[str, bytes]:
    from tpscalc.web import reports

    reports.clear_cache()
    return dict(_sample().collect())


def test_every_sample_is_recorded(live: dict[str, bytes]) -> None:
    index = json.loads((HERE / "data" / "index.json").read_text())
    assert sorted(index) == sorted(live)


@pytest.mark.parametrize("name", sorted(json.loads((HERE / "data" / "index.json").read_text())))
def test_output_matches_record(name: str, live: dict[str, bytes]) -> None:
    recorded = gzip.decompress((HERE / "data" / f"{name}.gz").read_bytes())
    if live[name] != recorded:
        diff = difflib.unified_diff(_lines(recorded), _lines(live[name]), "recorded", "live",
                                    lineterm="", n=1)
        pytest.fail(f"{name} changed:\n" + "\n".join(list(diff)[:40]))
