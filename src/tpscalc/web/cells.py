"""Table cells rendered in Python: the speed and fit cells repeat on every one of ~850 rows,
where a Jinja2 macro call costs more than the rest of the row together."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from markupsafe import Markup, escape

FIT_ICONS = {"comfortable": "✓✓ ", "tight": "✓ "}


def speed_cell(decode: Mapping[str, Any] | None, tps: Callable[[Any], str],
               label: Callable[[Any], str], gettext: Callable[[str], str]) -> Markup:
    """Estimated tok/s with its range and confidence (and a measurement when held), or a dash."""
    if not decode:
        return Markup("—")
    html = (
        f'<strong>{escape(tps(decode["tokens_per_s"]))}</strong> <span class="unit">tok/s</span>\n'
        f'<span class="range">{escape(tps(decode["low"]))}–{escape(tps(decode["high"]))} · '
        f"{escape(label(decode['confidence']))}</span>\n"
    )
    if decode.get("measured"):
        word = gettext("measured")
        html += f'<span class="measured">{escape(word)}: {escape(tps(decode["measured"]))}</span>'
    return Markup(html)


def fit_cell(
    fit: str,
    short_by: float | None,
    gib: Callable[[Any], str],
    label: Callable[[Any], str],
    gettext: Callable[[str], str],
) -> Markup:
    """The fit badge (comfortable / tight / no).

    With how much memory is missing when it does not fit.
    """
    html = (
        f'<span class="fit fit-{escape(fit)}">{FIT_ICONS.get(fit, "✗ ")}'
        f"{escape(label(fit))}</span>\n"
    )
    if short_by:
        short = gettext("short by %(gib)s GiB") % {"gib": gib(short_by)}
        html += f'<span class="short">{escape(short)}</span>'
    return Markup(html)
