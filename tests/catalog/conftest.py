"""Fixtures shared by the catalog tests: the models by name, and their architectures."""
from __future__ import annotations

from collections.abc import Callable

import pytest

from tpscalc.catalog import store
from tpscalc.catalog.schema import Architecture, Model


@pytest.fixture(scope="session")
def models() -> dict[str, Model]:
    """Every catalog model, by name (test_models.py overrides this with the tuple)."""
    return {m.name: m for m in store.models()}


@pytest.fixture(scope="session")
def arch_of(models: dict[str, Model]) -> Callable[[str], Architecture]:
    """The architecture of the model named; fails the test when it has none or no count."""

    def lookup(name: str) -> Architecture:
        arch = models[name].architecture
        assert arch is not None and arch.params_total, name
        return arch

    return lookup
