"""Time of a model or card report with a rig (gpus=, ram=) against the plain one, uncached.

    python benchmarks/rig_report_speed.py

Prints seconds per report (issue 29's "rig reports cost seconds"; the goal there: a rig model
page within twice a plain one). Timings are printed, never asserted.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from tpscalc.report import card_report, model_report
from tpscalc.report.request import (
    CARD_RIG_REPORT_PARAMS,
    MODEL_RIG_REPORT_PARAMS,
    parse_request,
)

CASES = [("model", "ether0", {}), ("model", "ether0", {"ram": "64"}),
         ("model", "ether0", {"gpus": "2", "ram": "64"}),
         ("model", "Llama 3.1-8B", {}), ("model", "Llama 3.1-8B", {"gpus": "2", "ram": "64"}),
         ("model", "Llama 3.1-8B", {"runtime": "vllm", "gpus": "2"}),
         ("card", "RTX 4090", {}), ("card", "RTX 4090", {"ram": "64"}),
         ("card", "RTX 4090", {"gpus": "2"})]


def main() -> None:
    model_report.model_report("Llama 3.1-8B", parse_request({}, MODEL_RIG_REPORT_PARAMS))
    for kind, name, opts in CASES:
        start = time.perf_counter()
        if kind == "model":
            model_report.model_report(name, parse_request(opts, MODEL_RIG_REPORT_PARAMS))
        else:
            card_report.card_report(name, parse_request(opts, CARD_RIG_REPORT_PARAMS))
        print(f"{kind} {name} {opts or '(plain)'}: {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()
