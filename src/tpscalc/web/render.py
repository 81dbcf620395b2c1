"""Jinja2 environments (one per language, gettext installed), filters, and page URLs."""
from __future__ import annotations

import posixpath
from functools import cache, lru_cache
from importlib import resources
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from tpscalc.catalog import store
from tpscalc.i18n import LANGUAGES, format_number, format_release, translator
from tpscalc.report.quality import quality_words
from tpscalc.web import cells, charts, labels


def N_(message: str) -> str:
    """Mark `message` for extraction without translating it here (translated where shown)."""
    return message


def tps_digits(value: float) -> int:
    """Decimals that give a speed three significant figures ("226", "94.9", "8.12")."""
    return 0 if value >= 100 else 1 if value >= 10 else 2


def tokens_per_s(value: float | None, lang: str) -> str:
    """A speed with three significant figures ("226", "94.9", "8.12"), localised."""
    if value is None:
        return "—"
    return format_number(value, lang, tps_digits(value))


def parameters(count: float | None, lang: str) -> str:
    """A parameter count to three significant digits, as the report's texts give it: "15.8B",
    "7.24B", "671B", "135M" (localised decimal mark)."""
    if not count:
        return "—"
    for scale, unit in ((1e12, "T"), (1e9, "B"), (1e6, "M")):
        if count >= scale or unit == "M":
            value = float(f"{count / scale:.3g}")
            digits = max(0, 3 - len(str(int(value)))) if value < 1000 else 0
            text = format_number(value, lang, digits)
            return _trim_zeros(text, lang) + unit
    raise AssertionError("unreachable")


def _trim_zeros(text: str, lang: str) -> str:
    """'7.20' → '7.2', '15.0' → '15' (the decimal mark of `lang`)."""
    mark = format_number(0.5, lang, 1)[1]
    return text.rstrip("0").rstrip(mark) if mark in text else text


def page_file(path: str) -> str:
    """The exported file of a site path ("/es/models/x" → "es/models/x.html")."""
    clean = path.strip("/")
    if not clean:
        return "index.html"
    if clean.startswith("static/"):
        return clean
    return clean + ".html"


@lru_cache(maxsize=16_384)
def _relative_link(path: str, here: str) -> str:
    """The exported file of site path `path` relative to folder `here` (an export asks the same
    few thousand of these on every page)."""
    return posixpath.relpath(page_file(path), here)


class Urls:
    """Builds links for one page: absolute when served, relative files when exported."""

    def __init__(self, current_path: str, export: bool) -> None:
        self.current_path = current_path
        self.export = export
        self.here = posixpath.dirname(page_file(current_path)) or "."

    def __call__(self, path: str, **query: Any) -> str:
        """The link to site path `path` with `query` (dropped in a static export)."""
        if self.export:
            return _relative_link(path, self.here)
        clean = {k: v for k, v in query.items() if v not in (None, "", False)}
        return path + ("?" + urlencode(clean) if clean else "")


def _templates_dir() -> str:
    return str(resources.files("tpscalc.web").joinpath("templates"))


@cache
def environment(lang: str) -> Environment:
    """The Jinja2 environment for `lang` (autoescape on, gettext of `lang` installed)."""
    env = Environment(
        loader=FileSystemLoader(_templates_dir()),
        autoescape=select_autoescape(default=True),
        extensions=["jinja2.ext.i18n"],
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    tr = translator(lang)
    env.install_gettext_callables(tr.gettext, tr.ngettext, newstyle=True)  # type: ignore[attr-defined]
    env.filters.update(
        num=lambda v, digits=0: "—" if v is None else format_number(v, lang, digits),
        tps=lambda v: tokens_per_s(v, lang),
        gib=lambda v: "—" if v is None else format_number(v, lang, 1),
        params=lambda v: parameters(v, lang),
        release=lambda iso, precision="month": format_release(iso, precision, lang),
        label=lambda key: tr.gettext(labels.LABELS.get(str(key), str(key))),
        quality=lambda q: quality_words(q, lang, tr.gettext),
    )
    f = env.filters
    env.globals.update(
        lang=lang,
        languages=LANGUAGES,
        charts=charts,
        labels=labels,
        language_names=labels.LANGUAGE_NAMES,
        catalog_as_of=lambda: format_release(store.catalog_as_of(), "day", lang),
        speed=lambda decode: cells.speed_cell(decode, f["tps"], f["label"], tr.gettext),
        fit_badge=lambda fit, short_by=None, row=None: cells.fit_cell(
            fit, short_by, f["gib"], f["label"], tr.gettext, row
        ),
    )
    return env


def render_page(
    lang: str, template: str, path: str, *, export: bool = False, **context: Any
) -> str:
    """Render `template` for the page at site path `path` in `lang`."""
    env = environment(lang)
    urls = Urls(path, export)

    def switch(other: str) -> str:
        parts = path.strip("/").split("/")
        if parts and parts[0] in LANGUAGES:
            parts[0] = other
        else:
            parts = [other, "models"]
        return urls("/" + "/".join(parts))

    return env.get_template(template).render(
        url=urls, switch=switch, current_path=path, export=export, **context
    )
