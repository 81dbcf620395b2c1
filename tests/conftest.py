"""The fake engine and catalog (tests/report/report_fakes.py) shared by the report and CLI tests."""
from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

# The calibration's least-squares problems are small: OpenBLAS's threads only contend for the
# cores (the calibration test file runs ~30 % faster on two cores with one thread). Set before
# the first numpy import.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _load_fakes() -> ModuleType:
    # Registered as `report_fakes` so test modules can import it under --import-mode=importlib.
    if "report_fakes" in sys.modules:
        return sys.modules["report_fakes"]
    path = Path(__file__).parent / "report" / "report_fakes.py"
    spec = importlib.util.spec_from_file_location("report_fakes", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["report_fakes"] = module
    spec.loader.exec_module(module)
    return module


fakes = _load_fakes()


@pytest.fixture(scope="session", autouse=True)
def _patient_guard() -> Iterator[None]:
    """Tests check what a request answers, never how fast: the guard's wall-clock deadline and
    queue wait (503 past them) are stretched to an hour, so a first rig page on a loaded
    machine is not a failure. The guard's own tests pass their Limits explicitly."""
    from dataclasses import dataclass

    from tpscalc.web import guard

    @dataclass(frozen=True)
    class PatientLimits(guard.Limits):
        queue_wait_s: float = 3600.0
        deadline_s: float = 3600.0

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(guard, "Limits", PatientLimits)
        yield


@pytest.fixture
def fake_catalog(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The fake engine, cards, models and quantization ladder in place of the real ones."""
    from tpscalc.catalog import store
    from tpscalc.report import common

    monkeypatch.setattr(common, "default_engine", lambda: fakes.ENGINE)
    monkeypatch.setattr(store, "cards", lambda: fakes.CARDS)
    monkeypatch.setattr(store, "models", lambda: fakes.MODELS)
    monkeypatch.setattr(common, "quant_names", lambda: [q for q, _ in fakes.LADDER])
    return fakes
