"""`tpscalc model`, `tpscalc card`, `tpscalc estimate` through Typer's runner.

Also the entry point.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tpscalc.cli.main import app

runner = CliRunner()
pytestmark = pytest.mark.usefixtures("fake_catalog")


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_model_json() -> None:
    code, out, _ = run("model", "Test Coder 8B", "--json", "--all")
    assert code == 0
    data = json.loads(out)
    assert data["cards_fit"] == 6 and data["rows"][0]["gpu"] == "Alpha 24"
    assert data["rows"][-1]["short_by_gib"] > 0


def test_model_table_has_honest_headers() -> None:
    code, out, _ = run("model", "test-coder-8b", "--brief", "--wide", "--max-memory", "12")
    assert code == 0
    for header in ("Speed (tok/s)", "Memory (GiB)", "Bandwidth (GB/s)", "Needs (GiB)", "Zeta 12"):
        assert header in out
    assert "Alpha 24" not in out.split("match")[1]  # filtered out of the table


def test_card_json_and_table() -> None:
    code, out, _ = run("card", "Zeta 12", "--json", "--sort", "size")
    assert code == 0 and json.loads(out)["rows"][0]["model"] == "Test Coder 8B"
    code, out, _ = run("card", "Zeta 12")
    assert code == 0 and "Tiny 1B" in out


@pytest.mark.parametrize(("args", "message"), [
    (["model", "Test Codr 8B"], "Test Coder 8B"),
    (["model", "Test Coder 8B", "--context", "0"], "context must be between"),
    (["model", "Test Coder 8B", "--min-quality", "Q5"], "unknown quantization"),
    (["model", "Test Coder 8B", "--lang", "fr"], "unknown language"),
    (["card", "Zeta 13x"], "unknown card"),
    (["card", "Zeta 12", "--sort", "price"], "unknown sort"),
    (["estimate", "--model", "Test Coder 8B"], "--card"),
    (["estimate", "--model", "Test Coder 8B", "--gpu", "Zeta 12", "--quant", "Q9"],
     "unknown quantization"),
])
def test_bad_input_is_one_line_and_exit_2(args: list[str], message: str) -> None:
    code, out, err = run(*args)
    assert code == 2
    assert message in err and err.count("\n") == 1 and "Traceback" not in err + out


def test_estimate_json_shape() -> None:
    code, out, _ = run("estimate", "--model", "Test Coder 8B", "--gpu", "Zeta 12", "--json")
    assert code == 0
    data = json.loads(out)
    assert {"model", "gpu", "quant", "context", "backend", "memory", "fits", "fit", "decode",
            "prefill", "error"} <= set(data)
    assert set(data["memory"]) == {"weights_gib", "kv_cache_gib", "runtime_gib", "vision_gib",
                                   "total_gib", "approximated"}
    assert set(data["prefill"]) == {"tokens_per_s", "low", "high", "time_to_first_token_s"}
    assert data["quant"] == "Q8_0" and data["error"] is None
    assert data["decode"]["tokens_per_s"] == pytest.approx(37.5)


def test_estimate_csv_keeps_order_and_reports_bad_rows(tmp_path: Path) -> None:
    path = tmp_path / "in.csv"
    path.write_text("model,gpu,quant,context,backend\n"
                    "Test Coder 8B,Zeta 12,Q4_K_M,8192,\n"
                    "No Such Model,Zeta 12,,,\n"
                    "Tiny 1B,Alpha 24,,abc,vulkan\n"
                    "Tiny 1B,Alpha 24,,,vulkan\n")
    code, out, _ = run("estimate", "--input", str(path), "--json")
    assert code == 3  # some rows failed; every row is still printed
    rows = json.loads(out)
    assert [r["error"] is None for r in rows] == [True, False, False, True]
    assert rows[0]["quant"] == "Q4_K_M" and rows[0]["context"] == 8192
    assert rows[0]["memory"]["kv_cache_gib"] == pytest.approx(2.0)
    assert "No Such Model" in rows[1]["error"] and "abc" in rows[2]["error"]
    assert rows[3]["backend"] == "vulkan" and rows[3]["context"] == 4096


def test_python_api_matches_cli() -> None:
    import tpscalc

    data = tpscalc.api.evaluate("Test Coder 8B", "Zeta 12")
    assert data["decode"]["tokens_per_s"] == pytest.approx(37.5)
    report = tpscalc.api.model_report("Test Coder 8B", context=8192)
    assert tpscalc.api.report_json(report)["context"] == 8192
    assert tpscalc.api.card_report("Zeta 12").models_fit == 2


def test_entry_point_bad_context_exits_2_without_traceback() -> None:
    proc = subprocess.run([sys.executable, "-m", "tpscalc", "model", "x", "--context", "-1"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 2
    assert "context must be between" in proc.stderr and "Traceback" not in proc.stderr


def test_tpscalc_evaluate_with_a_fixed_quantization() -> None:
    import tpscalc

    data = tpscalc.evaluate("Test Coder 8B", "Alpha 24", quant="Q4_K_M")
    assert data["quant"] == "Q4_K_M" and data["decode"]["tokens_per_s"] == pytest.approx(250.0)


def test_unknown_backend_is_one_line_and_exit_2() -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "tpscalc", "estimate", "--model", "Llama 2-7B",
                           "--gpu", "4090", "--backend", "foo"], check=False, capture_output=True,
                          text=True)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "backend" in done.stderr


def test_tables_read_whole_at_80_columns() -> None:
    from rich.console import Console

    from tpscalc.api import card_report, model_report
    from tpscalc.cli.render import render_card_report, render_model_report

    for report, render in ((model_report("Test Coder 8B", all=True), render_model_report),
                           (card_report("Zeta 12", all=True), render_card_report)):
        console = Console(width=80, record=True, force_terminal=False)
        render(report, console)
        text = console.export_text()
        assert "…" not in text and max(len(line) for line in text.splitlines()) <= 80
    wide = Console(width=200, record=True)
    render_model_report(model_report("Test Coder 8B"), wide, wide=True)
    assert "Bandwidth (GB/s)" in wide.export_text()


@pytest.mark.parametrize("argv", [
    ["model", "StarCoder 2 15B", "--json"], ["card", "4090", "--json"],
    ["estimate", "--model", "StarCoder 2 15B", "--card", "4090", "--json"]])
def test_the_fast_commands_import_no_numpy_pydantic_or_typer(argv: list[str]) -> None:
    """A plain `model`, `card` or `estimate` answers without numpy (the engine computes in
    floats), pydantic (the catalog loads pre-validated records) or Typer."""
    code = ("import sys, io, contextlib\n"
            "from tpscalc.cli.fast import run\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    assert run({argv!r})\n"
            "print(sorted(m for m in ('pydantic', 'numpy', 'typer', 'gguf') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_help_loads_neither_the_catalog_nor_the_engine() -> None:
    """Start-up: `tpscalc --help` imports the commands, not pydantic, numpy or gguf."""
    code = ("import sys, tpscalc.cli.main\n"
            "print(sorted(m for m in ('pydantic', 'numpy', 'gguf') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
