"""Every file the CLI reads is bounded (issue 29, items 3-5): a device, a pipe, a huge or deep
file, a non-finite number or an impossible shape ends with one line and exit code 2."""
from __future__ import annotations

import json
import os
import queue
import struct
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tpscalc.cli.main import app
from tpscalc.sources.files import MAX_JSON_BYTES

runner = CliRunner()
CONFIG = {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 256,
          "intermediate_size": 512, "num_attention_heads": 4, "num_key_value_heads": 2,
          "vocab_size": 1000, "max_position_embeddings": 4096}


def one_line_error(args: list[str]) -> str:
    result = runner.invoke(app, args)
    err = result.stderr
    assert result.exit_code == 2, (result.exit_code, result.stdout, err)
    assert err.startswith("error: ") and err.strip().count("\n") == 0, err
    assert "Traceback" not in err + result.stdout
    return err


@pytest.mark.parametrize("option", ["--config", "--input"])
def test_dev_zero_is_refused_in_one_line(option: str) -> None:
    args = [option, "/dev/zero"] + (["--card", "4090"] if option == "--config" else [])
    done = subprocess.run([sys.executable, "-m", "tpscalc", "estimate", *args],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1, done.stderr


def test_a_huge_sparse_config_is_refused_from_its_size(tmp_path: Path) -> None:
    big = tmp_path / "config.json"
    with big.open("wb") as fh:
        fh.truncate(50 * 2**30)  # 50 GiB of nothing: refused before a byte is read
    assert "too large" in one_line_error(["estimate", "--config", str(big), "--card", "4090"])


def _endless_writer(fifo: Path, line: bytes) -> threading.Thread:
    def write() -> None:
        try:
            with fifo.open("wb") as fh:
                for _ in range(MAX_JSON_BYTES // len(line) * 4):
                    fh.write(line)
        except (BrokenPipeError, OSError):
            pass

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_an_endless_pipe_as_config_stops_at_the_limit(tmp_path: Path) -> None:
    fifo = tmp_path / "config.json"
    os.mkfifo(fifo)
    writer = _endless_writer(fifo, b'{"a": 1, ' * 1000)
    assert "too large" in one_line_error(["estimate", "--config", str(fifo), "--card", "4090"])
    writer.join(10)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_pipe_of_one_endless_line_as_csv_stops_at_the_line_limit(tmp_path: Path) -> None:
    fifo = tmp_path / "rows.csv"
    os.mkfifo(fifo)
    writer = _endless_writer(fifo, b"x" * 65536)
    assert "line longer than" in one_line_error(["estimate", "--input", str(fifo)])
    writer.join(10)


@pytest.mark.parametrize("text", ["[" * 100_000, '{"a":' * 100_000 + "1" + "}" * 100_000])
def test_a_deeply_nested_config_is_one_line(tmp_path: Path, text: str) -> None:
    f = tmp_path / "config.json"
    f.write_text(text)
    assert "nested too deeply" in one_line_error(["estimate", "--config", str(f), "--card",
                                                  "4090"])


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e999", "9" * 5000])
def test_non_finite_numbers_in_a_config_are_one_line(tmp_path: Path, value: str) -> None:
    f = tmp_path / "config.json"
    f.write_text(json.dumps(CONFIG).replace('"hidden_size": 256', f'"hidden_size": {value}'))
    assert "not JSON" in one_line_error(["estimate", "--config", str(f), "--card", "4090"])


@pytest.mark.parametrize(("key", "value", "named"), [
    ("hidden_size", 1e12, "hidden_size"),
    ("hidden_size", 10**12, "hidden_size"),
    ("max_position_embeddings", 1e30, "max_position_embeddings"),
    ("num_key_value_heads", 3, "num_key_value_heads"),
    ("vocab_size", 2**40, "vocab_size"),
    ("intermediate_size", 2**40, "intermediate_size"),
    ("num_attention_heads", 10**6, "num_attention_heads"),
    ("hidden_size", "huge", "hidden_size"),
])
def test_impossible_shapes_name_the_field(tmp_path: Path, key: str, value: object,
                                          named: str) -> None:
    f = tmp_path / "config.json"
    f.write_text(json.dumps({**CONFIG, key: value}))
    err = one_line_error(["estimate", "--config", str(f), "--card", "4090"])
    assert named in err or "not a number" in err


def test_a_plain_config_still_estimates(tmp_path: Path) -> None:
    f = tmp_path / "config.json"
    f.write_text(json.dumps(CONFIG))
    result = runner.invoke(app, ["estimate", "--config", str(f), "--card", "4090", "--json"])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["memory"]["total_gib"] > 0


def _gguf_string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def _gguf(tensors: bytes, n_tensors: int, meta: bytes = b"", n_kv: int = 0) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", 3, n_tensors, n_kv) + meta + tensors


def test_a_gguf_of_nested_arrays_is_one_line(tmp_path: Path) -> None:
    depth = 100_000
    meta = _gguf_string("general.nested") + struct.pack("<I", 9)
    meta += struct.pack("<IQ", 9, 1) * depth + struct.pack("<IQ", 4, 0)
    f = tmp_path / "nested.gguf"
    f.write_bytes(_gguf(b"", 0, meta, 1))
    assert "nested" in one_line_error(["estimate", "--gguf", str(f), "--card", "4090"])


def test_a_gguf_tensor_of_impossible_shape_is_one_line(tmp_path: Path) -> None:
    tensor = _gguf_string("token_embd.weight") + struct.pack("<IQQIQ", 2, 2**62, 2**62, 0, 0)
    f = tmp_path / "huge.gguf"
    f.write_bytes(_gguf(tensor, 1))
    assert "impossible shape" in one_line_error(["estimate", "--gguf", str(f), "--card", "4090"])


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null"])
def test_a_device_as_gguf_is_one_line(device: str) -> None:
    if not Path(device).exists():
        pytest.skip(f"no {device}")
    one_line_error(["estimate", "--gguf", device, "--card", "4090"])


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_csv_streams_each_result_before_the_next_row_is_read(tmp_path: Path) -> None:
    """The first result is printed while the CSV is still open (no row after it written yet):
    a long CSV prints as it is computed, with bounded memory."""
    fifo = tmp_path / "rows.csv"
    os.mkfifo(fifo)
    proc = subprocess.Popen([sys.executable, "-m", "tpscalc", "estimate", "--input", str(fifo),
                             "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stdout is not None
    reader = threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout or ()],
                              daemon=True)
    reader.start()
    seen: list[str] = []
    try:
        with fifo.open("w") as fh:
            fh.write("model,card\nStarCoder 2 15B,4090\n")
            fh.flush()
            while not seen or not seen[-1].strip().startswith('"error"'):
                seen.append(lines.get(timeout=120))  # printed while the CSV is still open
            assert seen[0] == "[\n" and '"StarCoder 2 15B"' in "".join(seen)
            fh.write("StarCoder 2 15B,RTX 3090\n")
        proc.wait(timeout=120)
        reader.join(10)
        err = proc.stderr.read() if proc.stderr else ""
    finally:
        proc.kill()
    while not lines.empty():
        seen.append(lines.get())
    assert proc.returncode == 0, err
    rows = json.loads("".join(seen))
    assert [r["gpu"] for r in rows] == ["GeForce RTX 4090", "GeForce RTX 3090"]
