"""The catalog: cards, models and quantizations, loaded lazily from the committed data files."""
from __future__ import annotations

from tpscalc.catalog import store
from tpscalc.catalog.lookup import NameNotFoundError, resolve
from tpscalc.catalog.schema import Architecture, Card, Cpu, Model


def get_card(name: str) -> Card:
    """The card `name` designates ("4090", "RTX 4090", "geforce-rtx-4090", "M2 Max 38-core")."""
    return resolve(name, store.cards(), "card")


def get_model(name: str) -> Model:
    """The model `name` designates ("starcoder2-15b", "StarCoder 2 15B")."""
    names = store.model_names()  # before every model is loaded: the names, then that one
    if names is not None:
        return store.model_at(resolve(name, names, "model").position)
    return resolve(name, store.models(), "model")


def get_cpu(name: str) -> Cpu:
    """The CPU `name` designates ("7950X", "Ryzen 9 7950X", "M3 Max 16-core CPU")."""
    return resolve(name, store.cpus(), "CPU")


def cpu_of_card(card: Card) -> Cpu | None:
    """The CPU of a unified-memory chip of the catalog (Apple, Strix Halo, GB10); None for a
    card with its own memory or a chip whose CPU the table lacks."""
    if not card.unified_memory:  # a discrete card: no need to load the CPU table
        return None
    return next((c for c in store.cpus() if card.name in c.cards), None)


__all__ = ["Architecture", "Card", "Cpu", "Model", "NameNotFoundError", "cpu_of_card",
           "get_card", "get_cpu", "get_model"]
