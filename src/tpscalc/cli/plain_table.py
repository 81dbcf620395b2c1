"""A plain table renderer for the CLI's result tables: the box rich draws (HEAVY_HEAD), drawn
with string joins instead of rich's layout engine, which spent 85-93 % of `tpscalc model`'s
time on a 600-row table (issue 27).

Where the table fits the width the output is rich's, byte for byte (a test compares the two).
Where it does not, cells wrap at spaces, widest column first, and a column never gets
narrower than its longest word: a number is never cut ("10,2…"); a table whose words alone
are too wide goes past the width rather than cutting them.
"""
from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Justify = Literal["left", "right"]
# ANSI styles for a terminal (the fit label's colours, rich's bold header and italic title).
_SGR = {"green": "32", "yellow": "33", "red": "31", "bold": "1", "italic": "3", "dim": "2"}


@dataclass(frozen=True)
class Cell:
    """A cell's text and its style name ("green", "" for none)."""

    text: str
    style: str = ""


def cell_len(text: str) -> int:
    """Terminal columns `text` takes (East Asian wide and full-width characters take two)."""
    if text.isascii():
        return len(text)
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else
               0 if unicodedata.combining(ch) else 1 for ch in text)


def _styled(text: str, style: str, color: bool) -> str:
    if not color or not style or not text:
        return text
    codes = ";".join(_SGR[s] for s in style.split() if s in _SGR)
    return f"\x1b[{codes}m{text}\x1b[0m" if codes else text


def _wrap(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width` columns, broken at spaces only (a longer word keeps
    its own line)."""
    if cell_len(text) <= width:
        return [text]
    lines: list[str] = []
    line = ""
    for word in text.split(" "):
        candidate = f"{line} {word}" if line else word
        if line and cell_len(candidate) > width:
            lines.append(line)
            line = word
        else:
            line = candidate
    lines.append(line)
    return lines


def _longest_word(text: str) -> int:
    return max((cell_len(w) for w in text.split(" ")), default=0)


def column_widths(headers: Sequence[str], rows: Sequence[Sequence[Cell]],
                  max_width: int) -> list[int]:
    """Content width of each column: the widest cell, then, while the table is wider than
    `max_width`, the widest column narrowed by one, never below its longest word."""
    natural = [cell_len(h) for h in headers]
    floor = [_longest_word(h) for h in headers]
    for cells in rows:
        for i, c in enumerate(cells):
            n = cell_len(c.text)
            natural[i] = max(natural[i], n)
            if n > floor[i]:
                floor[i] = max(floor[i], _longest_word(c.text))
    widths = list(natural)
    overhead = 3 * len(widths) + 1  # "│ " before each cell, " " after, the last "│"
    excess = sum(widths) + overhead - max_width
    while excess > 0:
        room = [(w - f, i) for i, (w, f) in enumerate(zip(widths, floor, strict=True)) if w > f]
        if not room:
            break
        _, widest = max((widths[i], i) for _, i in room)
        widths[widest] -= 1
        excess -= 1
    return widths


def render(title: str, headers: Sequence[str], justify: Sequence[Justify],
           rows: Sequence[Sequence[Cell]], max_width: int, color: bool = False) -> str:
    """The table as text (lines joined by newlines, a final newline): a left-justified
    title, the heavy header box, one line per row (more where a cell wraps)."""
    widths = column_widths(headers, rows, max_width)
    total = sum(widths) + 3 * len(widths) + 1
    out = []
    if title:
        for line in _wrap(title, total):
            out.append(_styled(line, "italic", color) + " " * (total - cell_len(line)))
    out.append("┏" + "┳".join("━" * (w + 2) for w in widths) + "┓")
    out += _lines([Cell(h, "bold") for h in headers], widths, justify, "┃", color)
    out.append("┡" + "╇".join("━" * (w + 2) for w in widths) + "┩")
    for cells in rows:
        out += _lines(cells, widths, justify, "│", color)
    out.append("└" + "┴".join("─" * (w + 2) for w in widths) + "┘")
    return "\n".join(out) + "\n"


def _lines(cells: Sequence[Cell], widths: Sequence[int], justify: Sequence[Justify],
           bar: str, color: bool) -> list[str]:
    """One row's lines: each cell wrapped to its column, padded and justified."""
    wrapped = [_wrap(c.text, w) for c, w in zip(cells, widths, strict=True)]
    height = max(len(w) for w in wrapped)
    lines = []
    for k in range(height):
        parts = []
        for i, cell_lines in enumerate(wrapped):
            text = cell_lines[k] if k < len(cell_lines) else ""
            pad = " " * (widths[i] - cell_len(text))
            shown = _styled(text, cells[i].style, color)
            parts.append(pad + shown if justify[i] == "right" else shown + pad)
        lines.append(bar + " " + f" {bar} ".join(parts) + " " + bar)
    return lines


def table_width(headers: Sequence[str], rows: Sequence[Sequence[Cell]], max_width: int) -> int:
    """The columns `render` takes for this table at `max_width` (more when words overflow)."""
    widths = column_widths(headers, rows, max_width)
    return sum(widths) + 3 * len(widths) + 1


def render_blocks(headers: Sequence[str], rows: Sequence[Sequence[Cell]], color: bool = False,
                  heading: Sequence[int] = (0,)) -> str:
    """Each row as a block of "header  value" lines (for a terminal too narrow for the table):
    the `heading` columns' values joined as the block's first line, then the others."""
    label = max(cell_len(h) for i, h in enumerate(headers) if i not in heading)
    out: list[str] = []
    for cells in rows:
        if out:
            out.append("")
        out.append(_styled(" · ".join(cells[i].text for i in heading if cells[i].text), "bold",
                           color))
        for i, (header, cell) in enumerate(zip(headers, cells, strict=True)):
            if i in heading or not cell.text:
                continue
            pad = " " * (label - cell_len(header))
            out.append(f"  {header}{pad}  {_styled(cell.text, cell.style, color)}")
    return "\n".join(out) + "\n"
