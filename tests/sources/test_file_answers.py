"""What an answer for a user's file says: its own file in the command, no "high" confidence for
a toy far below every measured model, and no command for a model that does not fit."""
from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

from tpscalc import api
from tpscalc.report.common import SMALLEST_MEASURED_GIB, outside_measured_range

MEASURED = Path(__file__).resolve().parents[2] / "data" / "measured"


def test_the_smallest_measured_size_is_the_calibration_datas() -> None:
    sizes = [float(row["size_gib"]) for name in ("llamacpp_calibration.csv",
                                                 "llamacpp_extra_calibration.csv")
             for row in csv.DictReader((MEASURED / name).open(encoding="utf-8"))
             if row.get("size_gib")]
    assert min(sizes) == SMALLEST_MEASURED_GIB


def test_a_toy_gguf_gets_low_confidence_and_its_own_file(tiny_gguf: tuple[Path, int]) -> None:
    path, _ = tiny_gguf
    out = api.evaluate(None, "2x GeForce RTX 4090", gguf=path)
    assert outside_measured_range(out["memory"]["weights_gib"])
    assert out["decode"]["confidence"] == "low"
    assert out["command"]["llama_server"].startswith(f"-m {path} ")


def test_a_measured_size_model_keeps_its_confidence() -> None:
    out = api.evaluate("Llama 3.1-8B", "GeForce RTX 4090", quant="Q4_K_M")
    assert not outside_measured_range(out["memory"]["weights_gib"])
    assert out["decode"]["confidence"] != "low"


def test_an_answer_that_does_not_fit_carries_no_command() -> None:
    out = api.evaluate("Llama 3.3 70B", "GeForce RTX 3090", quant="Q8_0", ram=16)
    assert out["fits"] is False and out["command"] is None
    fits = api.evaluate("Llama 3.3 70B", "2x GeForce RTX 3090", quant="Q4_K_M", ram=64)
    assert fits["fits"] is True and fits["command"]["llama_server"].startswith("-m Llama-3.3")


def test_the_cli_says_a_toy_is_outside_the_measured_range(tiny_gguf: tuple[Path, int]) -> None:
    path, _ = tiny_gguf
    done = subprocess.run([sys.executable, "-m", "tpscalc", "estimate", "--gguf", str(path),
                           "--card", "GeForce RTX 4090"], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "far below the smallest model measured" in done.stdout and str(path) in done.stdout
    as_json = subprocess.run([sys.executable, "-m", "tpscalc", "estimate", "--gguf", str(path),
                              "--card", "GeForce RTX 4090", "--json"], capture_output=True,
                             text=True, timeout=120, check=False)
    assert json.loads(as_json.stdout)["decode"]["confidence"] == "low"


def test_an_answer_that_does_not_fit_says_what_would() -> None:
    out = api.evaluate("Llama 3.3 70B", "GeForce RTX 3090")
    assert out["fits"] is False
    ways = {w["change"]: w for w in out["to_fit"]}
    assert {"quant", "gpus", "ram"} <= set(ways)
    for change, options in (("quant", {"min_quality": "IQ2_XXS"}), ("gpus", {"gpus": 2}),
                            ("ram", {"ram": ways["ram"]["ram_gib"]})):
        again = api.evaluate("Llama 3.3 70B", "GeForce RTX 3090", **options)
        assert again["fits"] is True and "to_fit" not in again
        assert ways[change]["decode_tokens_per_s"] == again["decode"]["tokens_per_s"]
        assert ways[change]["quant"] == again["quant"]
    assert ways["ram"]["fit"] == "offload" and ways["ram"]["ram_gib"] >= out["short_by_gib"]


def test_the_cli_lists_what_would_make_it_fit() -> None:
    done = subprocess.run([sys.executable, "-m", "tpscalc", "estimate", "--model",
                           "Llama 3.3 70B", "--card", "GeForce RTX 3090"], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "What would make it fit:" in done.stdout and "on 2x GeForce RTX 3090" in done.stdout
    assert "llama-server" not in done.stdout
