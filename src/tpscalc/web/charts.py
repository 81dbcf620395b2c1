"""Inline SVG charts drawn on the server, readable without colour (labels, shapes, hatching)."""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from markupsafe import Markup, escape

WIDTH, HEIGHT = 560, 240
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 28, 44
Fmt = Callable[[float], str]
LEGEND_CHARS = 27  # a legend entry's name, in a row of three (11px text)

_PATTERNS = (
    "<defs>\n"
    '<pattern id="hatch-a" width="6" height="6" patternUnits="userSpaceOnUse" '
    'patternTransform="rotate(45)">\n'
    '<rect width="6" height="6" fill="#dbe7f5"/>'
    '<line x1="0" y1="0" x2="0" y2="6" stroke="#1f4e8c" stroke-width="2"/></pattern>\n'
    '<pattern id="hatch-b" width="6" height="6" patternUnits="userSpaceOnUse">\n'
    '<rect width="6" height="6" fill="#f7e3c8"/><circle cx="3" cy="3" r="1.3" fill="#8a4b08"/>'
    "</pattern>\n"
    '<pattern id="hatch-c" width="6" height="6" patternUnits="userSpaceOnUse">\n'
    '<rect width="6" height="6" fill="#e4e4e4"/>'
    '<line x1="0" y1="3" x2="6" y2="3" stroke="#444" stroke-width="1.5"/></pattern>\n'
    "</defs>"
)


def _pick(point: dict[str, Any], *keys: str) -> float | None:
    for key in keys:
        value: Any = point
        for part in key.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if isinstance(value, (int, float)):
            return float(value)
    return None


def curve_series(curve: Any, value_key: str, x_key: str = "context"
                 ) -> list[tuple[str, list[tuple[float, float]]]]:
    """[(card name, [(x, value)])] per card of a report's `context_curve` (x: context) or
    `depth_curve` (x_key "depth"), in order; speeds only where the card fits."""
    series: dict[str, list[tuple[float, float]]] = {}
    for p in curve or []:
        x, y = _pick(p, x_key), _pick(p, value_key)
        if x is not None and y is not None and ("tokens_per_s" not in value_key
                                                or p.get("fits", True)):
            series.setdefault(str(p.get("gpu") or ""), []).append((x, y))
    return [(name, sorted(points)) for name, points in series.items() if points]


def _svg(title: str, body: str, height: int = HEIGHT) -> Markup:
    t = escape(title)
    return Markup(
        f'<svg class="chart" viewBox="0 0 {WIDTH} {height}" role="img" aria-label="{t}" '
        f'xmlns="http://www.w3.org/2000/svg"><title>{t}</title>{_PATTERNS}{body}</svg>'
    )


def _scale(lo: float, hi: float, a: float, b: float, log: bool) -> Callable[[float], float]:
    if log:
        lo, hi = math.log(lo), math.log(hi)
    span = (hi - lo) or 1.0
    return lambda v: a + ((math.log(v) if log else v) - lo) / span * (b - a)


def _axes(x_label: str, y_label: str, y_ticks: Sequence[tuple[float, str]]) -> str:
    bottom = HEIGHT - BOTTOM
    parts = [
        f'<line x1="{LEFT}" y1="{bottom}" x2="{WIDTH - RIGHT}" y2="{bottom}" stroke="#333"/>',
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{bottom}" stroke="#333"/>',
        (
            f'<text x="{(LEFT + WIDTH - RIGHT) / 2}" y="{HEIGHT - 6}" text-anchor="middle" '
            f'class="axis-label">{escape(x_label)}</text>'
        ),
        f'<text x="4" y="{TOP - 10}" class="axis-label">{escape(y_label)}</text>',
    ]
    for y, text in y_ticks:
        parts.append(
            f'<line x1="{LEFT - 4}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}" '
            f'stroke="#ddd"/><text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">'
            f"{escape(text)}</text>"
        )
    return "".join(parts)


_STYLES = (
    ('fill="#1f4e8c"', ""),
    ('fill="#fff" stroke="#8a4b08" stroke-width="1.5"', ' stroke-dasharray="6 4"'),
    ('fill="#2f6b2f"', ' stroke-dasharray="2 3"'),
)
_COLOURS = ("#1f4e8c", "#8a4b08", "#2f6b2f")


def _marker(style: int, x: float, y: float) -> str:
    if style == 0:
        return f'<rect x="{x - 3.5:.1f}" y="{y - 3.5:.1f}" width="7" height="7" {_STYLES[0][0]}/>'
    if style == 2:  # a triangle: the third line differs by shape and dash, not colour alone
        return (f'<path d="M{x:.1f},{y - 4.5:.1f}L{x + 4:.1f},{y + 3:.1f}L{x - 4:.1f},'
                f'{y + 3:.1f}Z" {_STYLES[2][0]}/>')
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" {_STYLES[1][0]}/>'


def line_chart(
    series: Sequence[tuple[str, Sequence[tuple[float, float]]]],
    *,
    title: str,
    x_label: str,
    y_label: str,
    x_fmt: Fmt,
    y_fmt: Fmt,
    even_x: bool = False,
) -> Markup:
    """Up to three labelled lines (solid with squares, dashed with circles, dotted with
    triangles); x on a log scale, or evenly spaced (`even_x`: a doubling series from 0)."""
    series = [(n, list(p)) for n, p in series[:3] if p]
    if not series:
        return Markup("")
    xs = sorted({x for _, pts in series for x, _ in pts})
    if even_x:
        step = (WIDTH - RIGHT - LEFT - 48) / max(1, len(xs) - 1)
        where = {x: LEFT + 24 + i * step for i, x in enumerate(xs)}
        sx: Callable[[float], float] = where.__getitem__
    else:
        sx = _scale(xs[0], xs[-1] * 1.0001, LEFT + 24, WIDTH - RIGHT - 24, log=True)
    top = max(y for _, pts in series for _, y in pts) * 1.2 or 1.0
    sy = _scale(0, top, HEIGHT - BOTTOM, TOP, log=False)
    ticks = [(sy(top * i / 4), y_fmt(top * i / 4)) for i in range(5)]
    body = [
        f'<text x="{sx(x):.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle">'
        f"{escape(x_fmt(x))}</text>"
        for x in xs
    ]
    for i, (name, pts) in enumerate(series):
        path = " ".join(
            f"{'M' if j == 0 else 'L'}{sx(x):.1f},{sy(y):.1f}" for j, (x, y) in enumerate(pts)
        )
        body.append(
            f'<path d="{path}" fill="none" stroke="{_COLOURS[i]}" stroke-width="2"'
            f"{_STYLES[i][1]}/>"
        )
        for x, y in pts:
            body.append(_marker(i, sx(x), sy(y)))
            if i == 0 or len(series) == 1 or (len(pts) <= 4 and len(series) == 2):
                dy = -8 if i == 0 else 16
                body.append(
                    f'<text x="{sx(x):.1f}" y="{sy(y) + dy:.1f}" text-anchor="middle">'
                    f"{escape(y_fmt(y))}</text>"
                )
        if len(series) < 3:  # beside the y label, above the plot
            lx, ly, label = LEFT + 130 + i * 190, TOP - 10, name
        else:  # three: a row under the x label, names cut to fit a third of the width
            lx, ly = 12 + i * 182, HEIGHT + 12
            label = name if len(name) <= LEGEND_CHARS else name[:LEGEND_CHARS - 1] + "…"
        body.append(_marker(i, lx, ly - 4) + f'<text x="{lx + 8}" y="{ly}">{escape(label)}</text>')
    height = HEIGHT if len(series) < 3 else HEIGHT + 20
    return _svg(title, _axes(x_label, y_label, ticks) + "".join(body), height=height)


def breakdown_chart(parts: Sequence[tuple[str, float]], *, title: str, fmt: Fmt) -> Markup:
    """One horizontal bar split into hatched segments, with a legend naming each and its size."""
    total = sum(v for _, v in parts) or 1.0
    x, span, body = float(LEFT), WIDTH - LEFT - RIGHT, []
    fills = ("url(#hatch-a)", "url(#hatch-b)", "url(#hatch-c)")
    for i, (_name, value) in enumerate(parts):
        w = value / total * span
        body.append(
            f'<rect x="{x:.1f}" y="16" width="{max(w, 1.0):.1f}" height="34" '
            f'fill="{fills[i % 3]}" stroke="#333"/>'
        )
        x += w
    for i, (name, value) in enumerate(parts):
        y = 72 + 20 * i
        share = value / total * 100
        body.append(
            f'<rect x="{LEFT}" y="{y - 11}" width="22" height="14" fill="{fills[i % 3]}" '
            f'stroke="#333"/>'
            f'<text x="{LEFT + 30}" y="{y}">{escape(name)}: {escape(fmt(value))} '
            f"({share:.0f} %)</text>"
        )
    body.append(
        f'<text x="{LEFT}" y="{72 + 20 * len(parts)}" class="axis-label">'
        f"= {escape(fmt(total))}</text>"
    )
    return _svg(title, "".join(body), height=84 + 20 * len(parts))


def scatter_chart(
    points: Sequence[tuple[float, float, bool, str]],
    *,
    title: str,
    x_label: str,
    y_label: str,
    x_fmt: Fmt,
    y_fmt: Fmt,
    legend: tuple[str, str],
) -> Markup:
    """Speed against card memory: filled circles fit comfortably, hollow squares fit tightly."""
    pts = [p for p in points if p[0] > 0 and p[1] > 0]
    if not pts:
        return Markup("")
    sx = _scale(
        min(p[0] for p in pts) * 0.9,
        max(p[0] for p in pts) * 1.1,
        LEFT + 8,
        WIDTH - RIGHT - 8,
        log=True,
    )
    top = max(p[1] for p in pts) * 1.1
    sy = _scale(0, top, HEIGHT - BOTTOM, TOP, log=False)
    ticks = [(sy(top * i / 4), y_fmt(top * i / 4)) for i in range(5)]
    # One group per mark, the shared attributes on the group; a mark drawn where the same mark
    # already is (cards of one memory size and speed) is left out: it would look the same.
    circles: dict[str, None] = {}
    squares: dict[str, None] = {}
    for mem, tps, comfortable, _ in pts:
        cx, cy = sx(mem), sy(tps)
        if comfortable:
            circles[f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="3"/>'] = None
        else:
            squares[f'<rect x="{cx - 3:.1f}" y="{cy - 3:.1f}" width="6" height="6"/>'] = None
    body = []
    if circles:
        body.append(f'<g fill="#1f4e8c">{"".join(circles)}</g>')
    if squares:
        body.append(f'<g fill="none" stroke="#8a4b08" stroke-width="1.5">{"".join(squares)}</g>')
    for mem in sorted({p[0] for p in pts})[:: max(1, len({p[0] for p in pts}) // 8)]:
        body.append(
            f'<text x="{sx(mem):.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle">'
            f"{escape(x_fmt(mem))}</text>"
        )
    best = max(pts, key=lambda p: p[1])
    body.append(
        f'<text x="{min(sx(best[0]), WIDTH - 120):.1f}" y="{sy(best[1]) - 8:.1f}">'
        f"{escape(best[3])}</text>"
    )
    body.append(
        f'<circle cx="{WIDTH - 190}" cy="{TOP - 14}" r="3" fill="#1f4e8c"/>'
        f'<text x="{WIDTH - 182}" y="{TOP - 10}">{escape(legend[0])}</text>'
        f'<rect x="{WIDTH - 100}" y="{TOP - 17}" width="6" height="6" fill="none" '
        f'stroke="#8a4b08"/>'
        f'<text x="{WIDTH - 90}" y="{TOP - 10}">{escape(legend[1])}</text>'
    )
    return _svg(title, _axes(x_label, y_label, ticks) + "".join(body))


def serving_chart(
    points: Sequence[tuple[float, float, float]],
    *,
    target: float,
    title: str,
    x_label: str,
    y_label: str,
    names: tuple[str, str, str],
    x_fmt: Fmt,
    y_fmt: Fmt,
) -> Markup:
    """Aggregate and per-user speed (log y) against users at once (evenly spaced doublings),
    with the per-user target as a dotted rule; `points`: (users, aggregate, per user)."""
    if not points:
        return Markup("")
    xs = [p[0] for p in points]
    step = (WIDTH - RIGHT - LEFT - 48) / max(1, len(xs) - 1)
    sx = {x: LEFT + 24 + i * step for i, x in enumerate(xs)}
    values = [v for _, a, u in points for v in (a, u)] + [target]
    lo, hi = min(values) / 1.5, max(values) * 1.5
    sy = _scale(lo, hi, HEIGHT - BOTTOM, TOP, log=True)
    decades = range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
    ticks = [(sy(10.0 ** d), y_fmt(10.0 ** d)) for d in decades if lo <= 10.0 ** d <= hi]
    body = [f'<text x="{sx[x]:.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle">'
            f"{escape(x_fmt(x))}</text>" for x in xs]
    ty = sy(target)
    body.append(f'<line x1="{LEFT}" y1="{ty:.1f}" x2="{WIDTH - RIGHT}" y2="{ty:.1f}" '
                f'stroke="#444" stroke-width="1.5" stroke-dasharray="2 3"/>')
    body.append(f'<text x="{WIDTH - RIGHT - 4}" y="{ty - 5:.1f}" text-anchor="end">'
                f"{escape(names[2])}</text>")
    for i, col in enumerate((1, 2)):
        pts = [(p[0], p[col]) for p in points]
        path = " ".join(f"{'M' if j == 0 else 'L'}{sx[x]:.1f},{sy(y):.1f}"
                        for j, (x, y) in enumerate(pts))
        body.append(f'<path d="{path}" fill="none" stroke="{_COLOURS[i]}" stroke-width="2"'
                    f"{_STYLES[i][1]}/>")
        for x, y in pts:
            body.append(_marker(i, sx[x], sy(y)))
        x_end, y_end = pts[-1]
        body.append(f'<text x="{sx[x_end]:.1f}" y="{sy(y_end) + (-8 if i == 0 else 16):.1f}" '
                    f'text-anchor="middle">{escape(y_fmt(y_end))}</text>')
        lx, ly = LEFT + 130 + i * 190, TOP - 10
        body.append(_marker(i, lx, ly - 4) + f'<text x="{lx + 8}" y="{ly}">'
                    f"{escape(names[i])}</text>")
    return _svg(title, _axes(x_label, y_label, ticks) + "".join(body))
