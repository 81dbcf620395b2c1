"""What a held-out device's MoE decode borrows (issue 24: the held-out Strix Halo's +23 %).

    python benchmarks/moe_decode_rows.py

Two tables. First, each chip maker's MoE decode cost (Calibration.moe_matrix_mb: MB read at
the card's bandwidth per routed expert matrix a token multiplies) in the full fit and in the
fit without each device that holds MoE decode rows (calibrate.by_device): a term whose MoE
rows all come from one device is lost with it (before the cost was per maker, AMD's Vulkan
driver's MoE factor was the Strix Halo's alone). Second, every MoE decode row's measured ÷
predicted with the committed calibration and no MoE cost, by the size of one routed expert
matrix (hidden × expert FFN width, millions of weights): the extra time grows as the experts
shrink. Seconds.
"""
from __future__ import annotations

import dataclasses
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tools"))

import calibrate
from calibration_data import Obs, load_observations

from tpscalc.catalog import get_model
from tpscalc.estimate.calibration_store import calibration


def expert_matrix_mweights(o: Obs) -> float:
    """Weights of one routed expert matrix of the row's model, millions."""
    arch = get_model(o.model).architecture
    return arch.hidden_size * (arch.moe_intermediate_size or 0) / 1e6


def factors_table(obs: list[Obs]) -> str:
    """Each chip maker's MoE cost, full fit and with each MoE device held out."""
    devices = sorted({o.card.name for o in obs if o.kind == "decode" and o.is_moe})
    fits = {"(none)": calibrate.calibrate(obs, with_bands=False)}
    for dev in devices:
        fits[dev] = calibrate.calibrate([o for o in obs if o.card.name != dev], with_bands=False)
    makers = sorted({o.card.vendor or "" for o in obs if o.is_moe})
    lines = ["| device held out | " + " | ".join(f"{m} (MB)" for m in makers) + " |",
             "|---|" + "---|" * len(makers)]
    for dev, cal in fits.items():
        cells = [cal.moe_matrix_mb.get(m) for m in makers]
        lines.append(f"| {dev} | " + " | ".join("–" if c is None else f"{c:.3f}" for c in cells)
                     + " |")
    return "\n".join(lines)


def ratios_table(obs: list[Obs]) -> str:
    """Measured ÷ predicted of every MoE decode row with no MoE cost."""
    off = dataclasses.replace(calibration(), moe_matrix_mb={})
    groups: dict[tuple[float, str, str, str], list[str]] = defaultdict(list)
    for o in obs:
        if o.kind != "decode" or not o.is_moe:
            continue
        pred, _ = calibrate.predict(off, o)
        key = (expert_matrix_mweights(o), o.model, o.card.name, o.backend)
        groups[key].append(f"{o.tokens_per_s / pred:.2f} ({o.quant}, d{o.depth // 1024}k)")
    lines = ["| expert matrix (M weights) | model | device | backend | measured ÷ predicted |",
             "|---|---|---|---|---|"]
    for (size, model, dev, be), cells in sorted(groups.items()):
        lines.append(f"| {size:.2f} | {model} | {dev} | {be} | {', '.join(cells)} |")
    return "\n".join(lines)


def main() -> int:
    """Print both tables."""
    obs = list(load_observations(extra=True))
    print("MoE decode cost per chip maker, full fit and with each MoE device held out:\n")
    print(factors_table(obs))
    print("\nMoE decode rows, committed calibration without the MoE cost:\n")
    print(ratios_table(obs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
