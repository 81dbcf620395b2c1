"""Load the committed speed calibration (catalog/data/calibration.json) once, on first use."""
from __future__ import annotations

from functools import cache

from tpscalc.catalog.store import read_json
from tpscalc.estimate.calibration import Calibration, from_dict

CALIBRATION_FILE = "calibration.json"


@cache
def calibration() -> Calibration:
    """The fitted speed-model parameters, bands and measured speeds (run `make calibrate` to rebuild)."""
    return from_dict(read_json(CALIBRATION_FILE))
