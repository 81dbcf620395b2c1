"""--runtime on the command line and runtime= in the JSON API and CSV input (issue 25)."""
from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tpscalc.cli.main import app

runner = CliRunner()


def test_ollama_answer_has_its_command() -> None:
    result = runner.invoke(app, ["estimate", "--model", "Llama 3.1-8B", "--gpu", "4090",
                                 "--runtime", "ollama", "--json"])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["runtime"] == "ollama" and data["fits"]
    assert data["run"]["command"].startswith("ollama create ")
    assert data["memory"]["total_gib"] > 0 and data["decode"]["tokens_per_s"] > 0


def test_mlx_on_m4_max_is_4bit_and_says_which_m4_max() -> None:
    result = runner.invoke(app, ["estimate", "--model", "Llama 3.1-8B", "--gpu", "M4 Max",
                                 "--runtime", "mlx", "--json"])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert (data["runtime"], data["quant"], data["gpu"]) == (
        "mlx", "MLX-4bit", "Apple M4 Max (32-core GPU)")
    assert data["run"]["command"].startswith("mlx_lm.generate --model mlx-community/")
    # the name fits two GPU configurations: the answer says which and names the other
    assert "Apple M4 Max (40-core GPU)" in " ".join(data["notes"])
    table = runner.invoke(app, ["estimate", "--model", "Llama 3.1-8B", "--gpu", "M4 Max",
                                "--runtime", "mlx"])
    assert "Apple M4 Max (40-core GPU)" in table.stdout


def test_h100_is_still_ambiguous() -> None:
    result = runner.invoke(app, ["estimate", "--model", "Llama 3.1-8B", "--gpu", "H100"])
    assert result.exit_code == 2 and "ambiguous" in result.stderr
    assert result.stderr.strip().count("\n") == 0


def test_mlx_on_a_geforce_is_one_line_and_exit_2() -> None:
    result = runner.invoke(app, ["estimate", "--model", "Llama 3.1-8B", "--gpu", "4090",
                                 "--runtime", "mlx"])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: MLX runs on Apple")
    assert result.stderr.strip().count("\n") == 0


def test_an_unknown_runtime_is_refused() -> None:
    result = runner.invoke(app, ["estimate", "--model", "Llama 3.1-8B", "--gpu", "4090",
                                 "--runtime", "exllama"])
    assert result.exit_code == 2 and "runtime" in result.stderr


def test_csv_rows_take_a_runtime_column(tmp_path: Path) -> None:
    f = tmp_path / "pairs.csv"
    f.write_text("model,gpu,runtime\nLlama 3.1-8B,4090,llamafile\nLlama 3.1-8B,4090,mlx\n")
    result = runner.invoke(app, ["estimate", "--input", str(f), "--json"])
    rows = json.loads(result.stdout)
    assert rows[0]["runtime"] == "llamafile" and rows[0]["error"] is None
    assert "MLX runs on Apple" in rows[1]["error"]
