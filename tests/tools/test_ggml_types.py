"""ggml_types.json is what tools/build_ggml_types.py writes from the installed gguf package, and
the run-time path sizes tensors from it without importing gguf."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

import build_ggml_types

from tpscalc.catalog.store import ggml_block_sizes


def test_committed_file_is_the_rebuild() -> None:
    assert build_ggml_types.OUT.read_text(encoding="utf-8") == build_ggml_types.text()


def test_sizes_agree_with_gguf() -> None:
    from gguf.constants import GGML_QUANT_SIZES

    assert ggml_block_sizes() == {t.name: tuple(v) for t, v in GGML_QUANT_SIZES.items()}


def test_a_catalog_model_report_imports_neither_gguf_nor_the_cli_or_web_stack() -> None:
    # nor reads every model (the engine's stored terms are looked up once models() is loaded)
    code = ("import sys; from tpscalc.report.model_report import model_report; "
            "from tpscalc.report.request import ReportRequest; "
            "from tpscalc.catalog import store; "
            "model_report('StarCoder 2 15B', ReportRequest()); "
            "print(sorted(m for m in ('gguf', 'typer', 'fastapi', 'jinja2') if m in sys.modules), "
            "store._compact_models.cache_info().currsize)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).parent)
    assert out.stdout.strip() == "[] 0"
