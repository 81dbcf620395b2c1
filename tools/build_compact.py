"""Write the compact catalog, src/tpscalc/catalog/data/zz_catalog*.pickle: the validated cards,
models and quantizations of cards.json, models.json and quants.json as their records (frozen
dataclasses, pickle protocol 5), weights.json's sizes as the engine reads them (with the
approximated sizes of the models weights.json leaves out), the engine's terms of each model at
the default query (estimate/engine.py stored_terms_row: the engine's own code, so a change to
the formulas makes this build differ from the committed files and the rebuild test fail), the
cards' name keys (catalog/lookup.py), with the CRC-32 of the four files. Three files
(store.COMPACT_FILE, MODELS_FILE, EACH_MODEL_FILE): the cards and models' names; every model;
each model alone. The store loads them without parsing 3 MB of JSON, validating 1,700 records
again or importing pydantic, and ignores them when the JSON has changed since. Deterministic;
a test rebuilds them and compares bytes.
Run: python tools/build_compact.py   (after tools/build_cards.py and tools/build_models.py)
"""
from __future__ import annotations

import pickle
import pickletools
import sys
from dataclasses import replace
from pathlib import Path

from tpscalc.catalog import lookup, quants, store
from tpscalc.catalog.schema import Model
from tpscalc.estimate import engine
from tpscalc.estimate.query import Query, context_within_limit
from tpscalc.estimate.runtime import LlamaCpp

OUT = Path(__file__).resolve().parents[1] / "src/tpscalc/catalog/data"


def weights_sizes(models: tuple[Model, ...]) -> dict[str, dict[str, tuple[float, float]]]:
    """weights.json's sizes as the engine reads them, plus, for each model known only by its
    parameter count (no architecture, so not in weights.json), its approximated sizes at the
    same file types, from the engine's own formula (LlamaCpp's fallback): a card report would
    otherwise compute ~4,600 of them and import the tensor formulas (~5 ms) at every start."""
    types, _ = store.weights_table()
    sizes = store.weights_sizes_of(store.weights_table())
    engine = LlamaCpp()
    for model in models:
        if model.architecture is None and model.slug not in sizes:
            sizes[model.slug] = dict(zip(types, engine._weights_bytes(model, types)))
    return sizes


def stored_terms(models: tuple[Model, ...]) -> dict[str, object]:
    """The engine's terms of each model at the default query (at the model's context limit
    when shorter, as a card report asks), by the engine's own code (engine.stored_terms_row):
    a card report would otherwise compute ~1,000 of them at every start (~10 ms)."""
    query = Query()
    rows = tuple(engine.stored_terms_row(
        m, replace(query, context=context_within_limit(m, query))) for m in models)
    return {"fields": engine.TERMS_FIELDS, "rows": rows}


def _plain(key: lookup.NameKey) -> tuple[str, str, tuple[str, ...]]:
    """A name key as plain values, its words sorted (a set's order varies between runs)."""
    return key.compact, key.core, tuple(sorted(key.tokens))


def build() -> dict[Path, bytes]:
    """Each file's exact content (store.COMPACT_FILE, MODELS_FILE, EACH_MODEL_FILE)."""
    models, cards = store.validated_models(), store.validated_cards()
    crc32, weights = store.source_crcs(), weights_sizes(models)
    header = _pickled(("tpscalc.catalog.store.EACH_MODEL_FILE", crc32))
    each, spans, at = [header], [], len(header)
    for model in models:
        blob = _pickled((model, weights.get(model.slug)))
        each.append(blob)
        spans.append((at, at + len(blob)))
        at += len(blob)
    first = {"generated_by": "tools/build_compact.py", "crc32": crc32, "cards": cards,
             "card_name_keys": {card.name: _plain(lookup.name_key(card.name)) for card in cards},
             "quants": {key: quants.validated(key) for key in ("ladder", "extra")},
             "model_names": tuple((m.name, m.slug) for m in models),
             "model_spans": tuple(spans), "each_model_header": header}
    every = {"generated_by": "tools/build_compact.py", "crc32": crc32, "models": models,
             "weights": _pickled(weights), "terms": stored_terms(models)}
    return {OUT / store.COMPACT_FILE: _pickled(first), OUT / store.MODELS_FILE: _pickled(every),
            OUT / store.EACH_MODEL_FILE: b"".join(each)}


def _pickled(data: object) -> bytes:
    return pickletools.optimize(pickle.dumps(data, protocol=5))


def main() -> int:
    for path, content in build().items():
        path.write_bytes(content)
        print(f"wrote {path.name}: {len(content):,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
