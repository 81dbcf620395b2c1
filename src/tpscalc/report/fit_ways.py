"""What would make a model that does not fit run (an estimate's `to_fit`, api.ways_to_fit), as
sentences in a language: one builder for the CLI's lines and the site's fit page (issue 27)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tpscalc.i18n import format_number, translator
from tpscalc.report.common import sig


def fit_way_texts(r: Mapping[str, Any], lang: str) -> tuple[str, list[str]]:
    """The heading ("X does not fit on Y. What would make it fit:", or for an answer that pages
    from storage what would run without paging) and one sentence per way
    of `r["to_fit"]`, each with the quantization and decode speed (tok/s) it gives."""
    tr = translator(lang)
    texts = {
        "quant": tr.gettext("with {quant} (--min-quality IQ2_XXS): {tps} tok/s"),
        "context": tr.gettext("with a context of {context} tokens: {quant}, {tps} tok/s"),
        "gpus": tr.gettext("on 2x {card}: {quant}, {tps} tok/s"),
        "ram": tr.gettext("with {ram} GB of system RAM (part of the model in RAM): {quant}, "
                          "{tps} tok/s"),
    }
    if r.get("fit") == "paging":  # it runs, re-reading weights from storage every token
        heading = tr.gettext("{model} pages from storage on {card}. What would run without "
                             "paging:")
    else:
        heading = tr.gettext("{model} does not fit on {card}. What would make it fit:")
    heading = heading.format(model=r["model"], card=r["gpu"])
    lines = []
    for way in r.get("to_fit") or ():
        tps = way["decode_tokens_per_s"]
        lines.append(texts[way["change"]].format(
            quant=way["quant"], card=r["gpu"], tps=sig(tps, lang) if tps else "—",
            context=format_number(way["context"], lang),
            ram=format_number(way["ram_gib"] or 0, lang)))
    return heading, lines
