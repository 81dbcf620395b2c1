"""The CLI defects the hardening probe found: each ends with one line and the right exit code."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tpscalc.cli.main import app

runner = CliRunner()


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def one_line_error(code: int, err: str, expected_code: int = 2) -> None:
    assert code == expected_code, err
    assert err.startswith("error: ") and err.strip().count("\n") == 0 and "Traceback" not in err


def test_latin1_csv_is_one_line(tmp_path: Path) -> None:
    f = tmp_path / "pairs.csv"
    f.write_bytes(b"model,gpu\nCaf\xe9,4090\n")
    code, _, err = run("estimate", "--input", str(f))
    one_line_error(code, err)
    assert "UTF-8" in err


def test_csv_field_over_the_limit_is_one_line(tmp_path: Path) -> None:
    f = tmp_path / "pairs.csv"
    f.write_text("model,gpu\n" + "x" * 140_000 + ",4090\n", encoding="utf-8")
    code, _, err = run("estimate", "--input", str(f))
    one_line_error(code, err)


@pytest.mark.usefixtures("fake_catalog")
def test_bom_and_padded_headers_are_read(tmp_path: Path) -> None:
    f = tmp_path / "pairs.csv"
    f.write_bytes("\ufeff model , gpu ,context\nTest Coder 8B,Zeta 12,4096\n".encode())
    code, out, err = run("estimate", "--input", str(f), "--json")
    assert code == 0, err
    assert json.loads(out)[0]["gpu"] == "Zeta 12"


@pytest.mark.usefixtures("fake_catalog")
def test_failed_rows_exit_3_and_good_rows_still_print(tmp_path: Path) -> None:
    f = tmp_path / "pairs.csv"
    f.write_text("model,card,context\nTest Coder 8B,Zeta 12,8192\nNope Model,Zeta 12,8192\n"
                 "Test Coder 8B,Zeta 12,lots\n", encoding="utf-8")
    code, out, _ = run("estimate", "--input", str(f), "--json")
    assert code == 3
    rows = json.loads(out)
    assert rows[0]["error"] is None and rows[0]["context"] == 8192
    assert rows[1]["error"] and rows[1]["context"] == 8192  # the same type as a good row
    assert rows[2]["error"] and rows[2]["context"] is None


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_non_finite_memory_bounds_are_refused(value: str) -> None:
    code, out, err = run("model", "StarCoder 2 15B", "--min-memory", value, "--json")
    one_line_error(code, err)
    assert out == ""


def test_arabic_indic_digits_read_as_on_the_site() -> None:
    code, out, err = run("estimate", "--model", "Llama 3-8B", "--card", "4090", "--context",
                         "١٠٢٤", "--json")
    assert code == 0, err
    assert json.loads(out)["context"] == 1024


def test_a_name_with_a_nul_byte_is_refused() -> None:
    code, _, err = run("estimate", "--model", "Llama 3-8B\x00", "--card", "4090")
    one_line_error(code, err)
    assert "control characters" in err


def test_export_site_into_an_unwritable_place(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = run("export-site", str(blocker / "site"), "--limit", "1", "--lang", "en")
    one_line_error(code, err)


def test_serve_on_a_busy_port_is_one_line() -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run([sys.executable, "-m", "tpscalc", "serve", "--port", str(port)],
                              capture_output=True, text=True, timeout=60, check=False)
    one_line_error(proc.returncode, proc.stderr)
    assert str(port) in proc.stderr


def test_the_report_commands_catch_the_api_input_errors() -> None:
    from tpscalc import api
    from tpscalc.cli.report_cmds import _input_errors

    assert set(_input_errors()) == set(api.INPUT_ERRORS)


@pytest.mark.parametrize("args", [["estimate", "--bogus"], ["card", "4090", "--sort", "nope"],
                                  ["nocommand"], ["serve", "--port", "abc"],
                                  ["model", "starcoder2-15b", "--wide=3"]])
def test_usage_errors_are_one_line_not_a_box(args: list[str]) -> None:
    code, out, err = run(*args)
    one_line_error(code, err)
    assert "╭" not in err and "Usage:" not in err and out == ""


def test_help_and_the_bare_command_still_show_the_help() -> None:
    code, out, _ = run("estimate", "--help")
    assert code == 0 and "--input" in out
    code, out, err = run()
    assert code == 2 and "estimate" in out + err


def test_the_help_names_each_options_unit() -> None:
    """Layer and GPU counts are not labelled TOKENS (the count kind's default)."""
    code, out, _ = run("estimate", "--help")
    lines = {ln.split()[1]: ln.split()[2] for ln in out.splitlines()
             if len(ln.split()) > 2 and ln.split()[1].startswith("--")}
    assert code == 0
    assert lines["--n-gpu-layers"] == lines["--n-cpu-moe"] == "LAYERS"
    assert lines["--gpus"] == "N" and lines["--depth"] == "TOKENS"


@pytest.mark.parametrize("args", [["estimate", "--model", "Llama 3.1-8B", "--gpu", "4090"],
                                  ["model", "Llama 3.1-8B"]])
def test_a_reader_that_stops_early_gets_no_traceback(args: list[str]) -> None:
    """`tpscalc ... | head -1`: the closed pipe ends the command quietly (exit 141, SIGPIPE's,
    on the fast path; click's 1 on Typer's), never with a traceback."""
    proc = subprocess.Popen([sys.executable, "-c", "from tpscalc.cli.main import main; main()",
                             *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()  # the reader goes away before the table is written
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) in (0, 1, 141) and "Traceback" not in err, err
