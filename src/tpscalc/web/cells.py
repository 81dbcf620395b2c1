"""Table cells rendered in Python: the speed and fit cells repeat on every one of ~850 rows,
where a Jinja2 macro call costs more than the rest of the row together."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from markupsafe import Markup, escape

FIT_ICONS = {"comfortable": "✓✓ ", "tight": "✓ ", "offload": "◐ ", "cpu": "◐ ",
             "paging": "◔ "}


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
    split: Mapping[str, Any] | None = None,
) -> Markup:
    """The fit badge (comfortable / tight / offload / cpu / no).

    With how much memory is missing when it does not fit, and an offloaded row's split
    (`split`: the row, with offload_share, n_cpu_moe and n_gpu_layers).
    """
    html = (
        f'<span class="fit fit-{escape(fit)}">{FIT_ICONS.get(fit, "✗ ")}'
        f"{escape(label(fit))}</span>\n"
    )
    if short_by:
        short = gettext("short by %(gib)s GiB") % {"gib": gib(short_by)}
        html += f'<span class="short">{escape(short)}</span>'
    if split and fit in ("offload", "paging"):
        html += f'<span class="split">{escape(split_text(split, gettext))}</span>'
    return Markup(html)


def split_text(row: Mapping[str, Any], gettext: Callable[[str], str]) -> str:
    """Where an offloaded row's weights are: "42 % in RAM · --n-cpu-moe 20" or "… · -ngl 50"."""
    share = round(100 * float(row.get("offload_share") or 0.0))
    text = gettext("%(percent)s %% in RAM") % {"percent": share}
    if row.get("n_cpu_moe"):
        return f"{text} · --n-cpu-moe {int(row['n_cpu_moe'])}"
    if row.get("n_gpu_layers") is not None:
        return f"{text} · -ngl {int(row['n_gpu_layers'])}"
    return text
