"""The catalog: cards, models and quantizations, loaded lazily from the committed data files."""
from __future__ import annotations

from tpscalc.catalog import store
from tpscalc.catalog.lookup import NameNotFoundError, resolve
from tpscalc.catalog.schema import Architecture, Card, Model


def get_card(name: str) -> Card:
    """The card `name` designates ("4090", "RTX 4090", "geforce-rtx-4090", "M2 Max 38-core")."""
    return resolve(name, store.cards(), "card")


def get_model(name: str) -> Model:
    """The model `name` designates ("starcoder2-15b", "StarCoder 2 15B")."""
    return resolve(name, store.models(), "model")


__all__ = ["Architecture", "Card", "Model", "NameNotFoundError", "get_card", "get_model"]
