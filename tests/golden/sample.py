"""A fixed sample of what users see (pages, JSON API, CLI output), keyed by a short name.

`python tests/golden/sample.py --write` records it under tests/golden/data/; the golden test
compares the live output with the record byte for byte. Re-record only when a change of output
is intended, and say so in the commit.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path

DATA = Path(__file__).parent / "data"

# (name, path) pairs served by the site and the JSON API.
HTTP = (
    ("api_model_starcoder", "/api/v1/models/starcoder-2-15b?search=rtx%2040"),
    ("api_model_ctx_q",
     "/api/v1/models/llama-3-1-8b?context=16384&min_quality=Q4_K_M&max_memory=16"),
    ("api_model_all", "/api/v1/models/qwen3-32b?all=1&search=radeon&backend=vulkan"),
    ("api_card_4090", "/api/v1/cards/geforce-rtx-4090?search=qwen&sort=speed"),
    ("api_card_m2", "/api/v1/cards/m2-max-38-core?context=32768&search=llama&sort=date"),
    ("api_estimate", "/api/v1/estimate?model=Llama%203-8B&gpu=4090&context=8192"),
    ("api_estimate_q",
     "/api/v1/estimate?model=starcoder2-15b&gpu=rtx%203060%2012%20gb&quant=Q4_K_M"),
    ("api_bad_context", "/api/v1/models/starcoder-2-15b?context=abc"),
    ("api_bad_quality", "/api/v1/models/starcoder-2-15b?min_quality=Q9"),
    ("api_bad_sort", "/api/v1/cards/geforce-rtx-4090?sort=weird"),
    ("api_models", "/api/v1/models?search=gemma"),
    ("api_cards", "/api/v1/cards?search=rtx%2050"),
    ("page_model_en", "/en/models/starcoder-2-15b?search=rtx%2040"),
    ("page_model_es", "/es/models/llama-3-8b?context=8192&max_memory=12"),
    ("page_model_nl_partial", "/nl/models/qwen3-32b?search=radeon&all=1&partial=1"),
    ("page_card_en", "/en/cards/geforce-rtx-4090?search=qwen"),
    ("page_card_nl", "/nl/cards/geforce-rtx-3060-12-gb?search=llama&sort=date&context=8192"),
    ("page_cards_index", "/en/cards?search=rtx%2040"),
    ("page_bad_context", "/en/models/starcoder-2-15b?context=-5"),
)

# (name, argv) of CLI calls.
CLI = (
    ("cli_model_json", ["model", "StarCoder 2 15B", "--search", "rtx 40", "--json"]),
    ("cli_model_table", ["model", "Llama 3.1-8B", "--context", "16384", "--max-memory", "16",
                         "--brief"]),
    ("cli_card_json", ["card", "4090", "--search", "qwen3", "--sort", "speed", "--json"]),
    ("cli_card_table", ["card", "RTX 3060 12 GB", "--search", "llama 3", "--lang", "es"]),
    ("cli_estimate_json", ["estimate", "--model", "starcoder2-15b", "--gpu", "M2 Max 38-core",
                           "--json"]),
    ("cli_estimate_kv", ["estimate", "--model", "Llama 3.1-8B", "--gpu", "4090", "--context",
                         "65536", "--kv-type", "q8_0"]),
    ("cli_context_beyond", ["estimate", "--model", "Llama 3-8B", "--gpu", "4090", "--context",
                            "65536"]),
    ("cli_bad_quality", ["model", "StarCoder 2 15B", "--min-quality", "Q9"]),
    ("cli_model_min_tps", ["model", "Qwen3-32B", "--min-tps", "30", "--search", "rtx 30",
                           "--brief"]),
)


def collect() -> Iterator[tuple[str, bytes]]:
    """(name, output bytes) for every sample, in order."""
    from fastapi.testclient import TestClient
    from typer.testing import CliRunner

    from tpscalc.cli.main import app
    from tpscalc.web.app import create_app

    client = TestClient(create_app())
    for name, path in HTTP:
        r = client.get(path)
        yield name, f"{r.status_code} {r.headers.get('content-type')}\n".encode() + r.content
    runner = CliRunner()
    for name, argv in CLI:
        res = runner.invoke(app, argv, env={"COLUMNS": "200", "TERM": "dumb"})
        yield name, f"exit {res.exit_code}\n".encode() + res.stdout_bytes + res.stderr_bytes


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def main() -> None:
    if "--write" not in sys.argv:
        sys.exit("usage: python tests/golden/sample.py --write")
    DATA.mkdir(exist_ok=True)
    index = {}
    for name, data in collect():
        (DATA / f"{name}.gz").write_bytes(gzip.compress(data, mtime=0))
        index[name] = digest(data)
    (DATA / "index.json").write_text(json.dumps(index, indent=1) + "\n")
    print(f"recorded {len(index)} samples in {DATA}")


if __name__ == "__main__":
    main()
