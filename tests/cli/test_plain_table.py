"""The plain table renderer: rich's table where it fits, wrapped (never cut) where it does not."""
from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.table import Table

from tpscalc.cli.plain_table import Cell, cell_len, render

HEADERS = ("Speed (tok/s)", "Card", "Memory (GiB)", "Needs (GiB)", "Quantization", "Fit")
JUSTIFY = ("right", "left", "right", "right", "left", "left")
ROWS = [("10,259", "GeForce RTX 4090", "24", "9.2", "Q8_0", "Comfortable"),
        ("47.3", "GeForce RTX 3060 3840SP", "6", "5.9", "Q4_K_M", "Tight"),
        ("—", "Radeon Instinct MI300X (ünïcode)", "192", "9.2", "Q8_0", "Short by 2.6 GiB")]


def _rich(title: str, width: int) -> str:
    table = Table(title=title, title_justify="left")
    for header, justify in zip(HEADERS, JUSTIFY, strict=True):
        table.add_column(header, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for row in ROWS:
        table.add_row(*row)
    out = io.StringIO()
    Console(file=out, width=width).print(table)
    return out.getvalue()


def _plain(title: str, width: int) -> str:
    rows = [tuple(Cell(c) for c in row) for row in ROWS]
    return render(title, HEADERS, JUSTIFY, rows, width)  # type: ignore[arg-type]


@pytest.mark.parametrize("title", ["3 cards match", ""])
def test_a_table_that_fits_is_riches_byte_for_byte(title: str) -> None:
    assert _plain(title, 200) == _rich(title, 200)


@pytest.mark.parametrize("width", [100, 80, 72])
def test_a_narrow_table_wraps_at_spaces_and_never_cuts_a_number(width: int) -> None:
    text = _plain("3 cards match", width)
    lines = text.splitlines()
    assert max(cell_len(line) for line in lines) <= width
    for word in ("10,259", "Comfortable", "Quantization", "GeForce", "3840SP", "(ünïcode)"):
        assert word in text
    assert "…" not in text


def test_words_too_long_for_the_width_overflow_rather_than_cut() -> None:
    text = _plain("", 30)
    assert "Quantization" in text and "Comfortable" in text and "10,259" in text


def test_colours_only_when_asked() -> None:
    rows = [(Cell("1"), Cell("Comfortable", "green"))]
    assert "\x1b[" not in render("t", ("a", "b"), ("left", "left"), rows, 80)
    coloured = render("t", ("a", "b"), ("left", "left"), rows, 80, color=True)
    assert "\x1b[32mComfortable\x1b[0m" in coloured and "\x1b[1ma\x1b[0m" in coloured


def test_an_estimate_in_an_80_column_terminal_cuts_no_number(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from rich.console import Console

    from tpscalc.cli import console as consoles
    from tpscalc.cli.estimate_run import run_estimate
    from tpscalc.report.request import ESTIMATE_CLI_PARAMS, parse_request

    out = io.StringIO()
    monkeypatch.setattr(consoles, "stdout_console", lambda: Console(file=out, width=80))
    run_estimate("Llama 3.1-8B", "GeForce RTX 4090", parse_request({}, ESTIMATE_CLI_PARAMS))
    text = out.getvalue()
    assert "…" not in text and "..." not in text
    assert "GeForce RTX 4090" in text and "Decode (tok/s, range)" in text
    lines = [line for line in text.splitlines() if "llama-server" not in line]
    assert max(cell_len(line) for line in lines) <= 80
