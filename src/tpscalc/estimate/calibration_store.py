"""Load the committed speed calibration (catalog/data/calibration.json) once, on first use.

The engine's one data read besides the weight table: the fitted parameters are data the
build (`tools/calibrate.py`) writes, so they ship with the catalog files but are parsed here,
where their type lives.
"""
from __future__ import annotations

from functools import cache

from tpscalc.catalog.store import read_json
from tpscalc.estimate.calibration import Calibration, from_dict

CALIBRATION_FILE = "calibration.json"


@cache
def calibration() -> Calibration:
    """The fitted speed-model parameters, bands and measured speeds.

    Run `make calibrate` to rebuild them.
    """
    return from_dict(read_json(CALIBRATION_FILE))
