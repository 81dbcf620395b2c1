"""Load the committed catalog files lazily (first use), validate them, and cache them.

Cards, models, quantizations and weight sizes come from zz_catalog.pickle when it matches
cards.json, models.json, quants.json and weights.json (their CRC-32s are in it, compared when
a JSON file is newer than the pickle): the same
records, validated when tools/build_compact.py wrote them, unpickled without validating again
or importing pydantic (a CLI answer spends ~50 ms less). Otherwise from the JSON, validated.
"""
from __future__ import annotations

import json
import os
import zlib
from functools import cache
from typing import Any, NamedTuple

from tpscalc.catalog.schema import Card, Cpu, Model, Quantization

try:  # the C unpickler alone: pickle.py's own imports cost a CLI answer ~1 ms
    from _pickle import loads as unpickle
except ImportError:  # another Python implementation
    from pickle import loads as unpickle

# The package's data folder, read as plain files: importlib.resources (with pathlib, tempfile,
# zipfile) costs a CLI answer ~10 ms of imports, and the package installs as files.
DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def read_bytes(filename: str) -> bytes:
    """The bytes of one file shipped in the package's data folder."""
    with open(os.path.join(DATA_DIR, filename), "rb") as fh:
        return fh.read()


class CatalogError(RuntimeError):
    """A catalog file is missing or holds an impossible value."""


def read_json(filename: str) -> Any:
    """Parse one JSON file shipped in the package's data folder."""
    try:
        raw = read_bytes(filename)
    except FileNotFoundError as exc:
        raise CatalogError(f"catalog file {filename} is missing: run `make catalog`") from exc
    return json.loads(raw.decode("utf-8"))


def _validate(kind: type[Card | Model | Cpu], rows: list[dict[str, Any]],
              filename: str) -> list[Any]:
    from tpscalc.catalog.validate import ValidationError

    out = []
    for i, row in enumerate(rows):
        try:
            out.append(kind.model_validate(row))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise CatalogError(
                f"{filename} entry {i} ({row.get('name', '?')}): {where}: {first['msg']}"
            ) from exc
    return out


# Named to sort after the JSON files: a git checkout and a wheel install write files in path
# order, so the pickle comes out the newest and compact_is_newest() holds without rebuilding.
# The first holds the cards, quantizations and the models' names; the second every model (a card
# report reads them all), the engine's terms stored for them and their weight sizes (pickled
# apart, unpickled on first use); the third each model with its sizes on its own, at a place
# the first gives, so that a model report reads and unpickles only its model.
COMPACT_FILE = "zz_catalog.pickle"
MODELS_FILE = "zz_catalog_models.pickle"
EACH_MODEL_FILE = "zz_catalog_one_model.pickle"
COMPACT_SOURCES = ("cards.json", "models.json", "quants.json", "weights.json")


def source_crcs() -> dict[str, int]:
    """CRC-32 of each JSON file the compact catalog is built from."""
    return {name: zlib.crc32(read_bytes(name)) for name in COMPACT_SOURCES}


def compact_is_newest(data_dir: str = DATA_DIR) -> bool:
    """Whether zz_catalog.pickle was written no earlier than each JSON file it is built from (file
    modification times), so that it was built from them as they are: then its stored CRC-32s
    are taken as theirs without reading 4.7 MB to recompute them (~2-5 ms at every start).

    Sound because the pickle is written only by tools/build_compact.py, after reading the JSON
    and recording its CRCs: editing a JSON file afterwards makes that file the newer one, and
    the CRCs are compared again. A checkout or an install writes both from one commit, where a
    test (the byte-identical rebuild) holds them together. Equal times count as current (file
    systems with coarse timestamps write a build's files within one tick)."""
    try:
        built = os.stat(os.path.join(data_dir, COMPACT_FILE)).st_mtime_ns
        return all(os.stat(os.path.join(data_dir, name)).st_mtime_ns <= built
                   for name in COMPACT_SOURCES)
    except OSError:
        return False


def _unpickled(raw: bytes) -> Any:
    """Our own build output, shipped in the package; None when it does not unpickle."""
    try:
        return unpickle(raw)
    except Exception:  # noqa: BLE001 (written by other code: a class it names is gone)
        return None


@cache
def _compact() -> dict[str, Any] | None:
    """The compact catalog's records, or None when it is missing or does not match the JSON."""
    try:
        raw = read_bytes(COMPACT_FILE)
    except FileNotFoundError:
        return None
    data = _unpickled(raw)
    if not isinstance(data, dict):
        return None
    if compact_is_newest():
        return data
    return data if data.get("crc32") == source_crcs() else None


@cache
def _compact_models() -> dict[str, Any] | None:
    """The models and weight sizes of the compact catalog, or None (missing, or not from the
    same build as COMPACT_FILE: the same CRC-32s of the JSON)."""
    compact = _compact()
    if compact is None:
        return None
    try:
        data = _unpickled(read_bytes(MODELS_FILE))
    except FileNotFoundError:
        return None
    return data if isinstance(data, dict) and data.get("crc32") == compact["crc32"] else None


# index in models() -> (the model, its weight sizes) read alone by model_at: models() gives
# these same objects, so that a model has one identity however it was found
_ALONE: dict[int, tuple[Model, dict[str, tuple[float, float]] | None]] = {}


def model_names() -> tuple[ModelName, ...] | None:
    """Every model's name and slug, in models() order, while models() is not loaded and the
    compact catalog has them (a lookup by name then reads one model: model_at)."""
    compact = _compact()
    if compact is None or not _models_unread():
        return None
    return tuple(ModelName(n, s, i) for i, (n, s) in enumerate(compact["model_names"]))


def model_at(index: int) -> Model:
    """models()[index], reading and unpickling that model alone while models() is not loaded."""
    held = _ALONE.get(index)
    if held is not None:
        return held[0]
    compact = _compact()
    if compact is not None and _models_unread():
        header = compact["each_model_header"]
        start, end = compact["model_spans"][index]
        try:
            with open(os.path.join(DATA_DIR, EACH_MODEL_FILE), "rb") as fh:
                ours = fh.read(len(header)) == header  # the same build's file
                fh.seek(start)
                loaded = _unpickled(fh.read(end - start)) if ours else None
        except OSError:
            loaded = None
        if isinstance(loaded, tuple) and isinstance(loaded[0], Model):
            _ALONE[index] = loaded
            return loaded[0]
    return models()[index]


class ModelName(NamedTuple):
    """A model as a lookup by name sees it, with its place in models()."""

    name: str
    slug: str
    position: int


@cache
def cards() -> tuple[Card, ...]:
    """Every card in the catalog, in file order."""
    compact = _compact()
    if compact is not None:
        return tuple(compact["cards"])
    return validated_cards()


@cache
def models() -> tuple[Model, ...]:
    """Every model in the catalog, in file order."""
    compact = _compact_models()
    if compact is not None:
        loaded = list(compact["models"])
        for i, (model, _) in _ALONE.items():
            loaded[i] = model  # the object a lookup already gave (an equal record)
        return tuple(loaded)
    return validated_models()


def stored_terms() -> dict[str, Any] | None:
    """The engine's per-model terms at the default query that tools/build_compact.py stored
    beside the compact catalog's models ({"fields", "rows"}: estimate/engine.py reads and checks
    them), with those models; None without a matching compact catalog, and while models() is
    not loaded (no model can be one of them yet: a model report reads its model alone)."""
    compact = None if _models_unread() else _compact_models()
    if compact is None or "terms" not in compact:
        return None
    return {**compact["terms"], "models": compact["models"]}


def card_name_keys() -> dict[str, tuple[str, str, tuple[str, ...]]]:
    """Card name → lookup.name_key(name) as (compact, core, sorted words) for every card, from
    the compact catalog ({} without it: lookup computes them)."""
    compact = _compact()
    return {} if compact is None else dict(compact["card_name_keys"])


_MODELS = models


def _models_unread() -> bool:
    """models() is this module's own (not one a test put in its place) and not loaded yet."""
    return models is _MODELS and not _MODELS.cache_info().currsize


def validated_cards() -> tuple[Card, ...]:
    """Every card from cards.json, validated (the compact catalog's source)."""
    return tuple(_validate(Card, read_json("cards.json")["cards"], "cards.json"))


def validated_models() -> tuple[Model, ...]:
    """Every model from models.json, validated (the compact catalog's source)."""
    return tuple(_validate(Model, read_json("models.json")["models"], "models.json"))


def compact_quants(key: str) -> tuple[Quantization, ...] | None:
    """The compact catalog's quantizations of quants.json's `key` ("ladder" or "extra"), or
    None without a matching compact catalog (quants.py then validates the JSON)."""
    compact = _compact()
    return None if compact is None else tuple(compact["quants"][key])


def model_weights_sizes(slug: str) -> dict[str, tuple[float, float]] | None:
    """weights_sizes().get(slug), without loading every model's when that model was read alone
    (model_at)."""
    for model, sizes in _ALONE.values():
        if model.slug == slug:
            return sizes
    return weights_sizes().get(slug)


@cache
def weights_sizes() -> dict[str, dict[str, tuple[float, float]]]:
    """slug → {file type: (weights bytes, bytes read per token)}: weights_table as the engine
    reads it, from the compact catalog (12,000 pairs, ~15 ms to convert) when it matches."""
    compact = _compact_models()
    if compact is not None:
        # a pickle of its own inside the file, unpickled here: a card report reads the engine's
        # stored terms instead and never asks (~2.5 ms of unpickling at every start)
        sizes = _unpickled(compact["weights"])
        if isinstance(sizes, dict):
            return sizes
    return weights_sizes_of(weights_table())


def weights_sizes_of(table: tuple[tuple[str, ...], dict[str, list[list[int]]]]
                     ) -> dict[str, dict[str, tuple[float, float]]]:
    """weights_sizes from the rows of weights_table."""
    types, rows = table
    return {slug: {t: (float(stored), float(read)) for t, (stored, read) in zip(types, row)}
            for slug, row in rows.items()}


@cache
def cpus() -> tuple[Cpu, ...]:
    """Every CPU of cpus.json (tools/build_cpus.py), validated on first use (only a named CPU
    or a unified-memory chip asks), in file order."""
    return tuple(_validate(Cpu, read_json("cpus.json")["cpus"], "cpus.json"))


@cache
def weights_table() -> tuple[tuple[str, ...], dict[str, list[list[int]]]]:
    """(file types, slug → [[weights bytes, bytes read per token], ...]) from weights.json."""
    data = read_json("weights.json")
    return tuple(data["types"]), data["models"]


@cache
def ggml_block_sizes() -> dict[str, tuple[int, int]]:
    """ggml tensor type name → (values per block, bytes per block), from ggml_types.json
    (written by tools/build_ggml_types.py from gguf's GGML_QUANT_SIZES)."""
    types = read_json("ggml_types.json")["types"]
    return {name: (int(block), int(size)) for name, (block, size) in types.items()}


@cache
def catalog_as_of() -> str:
    """The catalog's date, ISO: the newest model publication or card release it holds (the
    pages' "catalog as of")."""
    dates = [m.publication_date for m in models() if m.publication_date]
    dates += [c.release_date for c in cards() if c.release_date]
    return max(dates)[:10]
