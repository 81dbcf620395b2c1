"""The table data of a static export: every row of a model or card page as one compact file
per report, shared by its three languages, plus one dictionary per language.

A static page renders its first rows on the server, as the site does; the page's script loads
these files to show the rest (pages, search) in the browser. Numbers are kept as the server's
own text before the locale's marks go in ("1,234.5"; `i18n.neutral_number`), so the script
only swaps the marks and the cells read exactly as the server's. Card and model facts (name,
memory, release, ...) sit once in the language's dictionary; a row names its card or model by
its place there.

Files (site paths): /static/data/{lang}.js (the dictionary), /static/data/models/{slug}.js and
/static/data/cards/{slug}.js (the rows). Each is one line of JavaScript that stores JSON in
`window.tpscalcData`, so a page opened from disk (file://, where fetch is refused) loads it too.
"""
from __future__ import annotations

import json
from typing import Any, get_args

from tpscalc.catalog import store
from tpscalc.estimate.types import Confidence, FitLabel
from tpscalc.i18n import neutral_number, separators, translator
from tpscalc.report.quality import WORD_MESSAGES, kld_text
from tpscalc.web import cells
from tpscalc.web.render import environment, tps_digits

PREFIX = "(window.tpscalcData=window.tpscalcData||{})"
FITS: tuple[str, ...] = get_args(FitLabel)  # a row gives its fit and confidence as a place here
CONFIDENCES: tuple[str, ...] = get_args(Confidence)


def dictionary_path(lang: str) -> str:
    """Site path of `lang`'s dictionary."""
    return f"/static/data/{lang}.js"


def rows_path(kind: str, slug: str) -> str:
    """Site path of the rows of the `kind` ("model" or "card") report of `slug`."""
    return f"/static/data/{kind}s/{slug}.js"


def script(key: str, data: object) -> str:
    """The file text: `data` as JSON stored under `key`."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"{PREFIX}[{json.dumps(key)}]={text};\n"


def read_script(text: str) -> tuple[str, Any]:
    """(key, data) of a file `script` wrote (the tests read the files back)."""
    head, _, rest = text.partition("]=")
    return json.loads(head[len(PREFIX) + 1:]), json.loads(rest.rstrip().rstrip(";"))


def _tps(value: float | None) -> str | None:
    return None if value is None else neutral_number(value, tps_digits(value))


def _gib(value: float | None) -> str | None:
    return None if value is None else neutral_number(value, 1)


def _decode(decode: dict[str, Any] | None) -> list[Any] | None:
    if not decode:
        return None
    out = [_tps(decode["tokens_per_s"]), _tps(decode["low"]), _tps(decode["high"]),
           CONFIDENCES.index(decode["confidence"])]
    return out + [_tps(decode["measured"])] if decode.get("measured") else out


def _prefill(row: dict[str, Any]) -> str | None:
    prefill = row.get("prefill")
    return _tps(prefill["tokens_per_s"]) if prefill else None


def _quality(row: dict[str, Any]) -> list[Any] | None:
    """[KLD as the server writes it in English (None for a lossless file), words by place]."""
    q = row.get("quality")
    if not q:
        return None
    return [kld_text(q["kld"]) if q["basis"] == "fit" else None, WORD_MESSAGES.index(q["words"])]


def _card_index() -> dict[str, int]:  # not cached: the tests swap the catalog
    return {c.slug: i for i, c in enumerate(store.cards())}


def _model_index() -> dict[str, int]:
    return {m.slug: i for i, m in enumerate(store.models())}


def model_rows(report: dict[str, Any]) -> list[list[Any]]:
    """Every row of a model report: [card, decode, needs, quant, fit, short by, prompt speed,
    quality]; decode = [speed, low, high, confidence(, measured)], fit and confidence by place,
    quality = [KLD, words by place] (_quality)."""
    index = _card_index()
    return [[index[r["slug"]], _decode(r["decode"]), _gib(r["needs_gib"]), r["quant"],
             FITS.index(r["fit"]), _gib(r.get("short_by_gib")), _prefill(r), _quality(r)]
            for r in report.get("rows") or []]


def card_rows(report: dict[str, Any]) -> list[list[Any]]:
    """Every row of a card report: [model, decode, needs, approximated, quant, fit, short by,
    prompt speed, quality]."""
    index = _model_index()
    return [[index[r["slug"]], _decode(r["decode"]), _gib(r["needs_gib"]),
             int(bool(r.get("memory_approximated"))), r["quant"], FITS.index(r["fit"]),
             _gib(r.get("short_by_gib")), _prefill(r), _quality(r)]
            for r in report.get("rows") or []]


def rows_script(kind: str, report: dict[str, Any]) -> str:
    """The rows file of a `kind` report."""
    rows = model_rows(report) if kind == "model" else card_rows(report)
    return script("rows", {"kind": kind, "rows": rows})


def dictionary(lang: str) -> dict[str, Any]:
    """`lang`'s texts for the script: the number marks, the words, every card and model."""
    f = environment(lang).filters
    tr = translator(lang)
    label = f["label"]
    cards = [[c.slug, c.name, c.vendor, f["gib"](c.memory_gib), f["num"](c.bandwidth_gb_s),
              f["release"](c.release_date, c.release_date_precision)] for c in store.cards()]
    models = [[m.slug, m.name, ", ".join(m.organization), f["params"](m.parameters_total),
               f["release"](m.publication_date, "month")] for m in store.models()]
    words = {
        "fits": list(FITS),  # the class names (fit-comfortable, ...)
        "fit": [cells.FIT_ICONS.get(k, "✗ ") + label(k) for k in FITS],
        "confidence": [label(k) for k in CONFIDENCES],
        "measured": tr.gettext("measured"),
        "short": tr.gettext("short by %(gib)s GiB"),
        "approximated": tr.gettext("approximated from the parameter count"),
        "no_card": tr.gettext("No card matches these settings."),
        "no_model": tr.gettext("No model matches these settings."),
        "page": tr.gettext("Page %(page)s of %(pages)s"),
        "previous": tr.gettext("Previous"),
        "next": tr.gettext("Next"),
        "pages": tr.gettext("Pages of the table"),
        "quality": [tr.gettext(w) for w in WORD_MESSAGES],
    }
    return {"lang": lang, "separators": list(separators(lang)), "words": words,
            "cards": cards, "models": models}


def dictionary_script(lang: str) -> str:
    """The dictionary file of `lang`."""
    return script("dict", dictionary(lang))
