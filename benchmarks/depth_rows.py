"""Decode at depth and gemma-4 rows, held out by device and by architecture (issue 24 part 2).

    python benchmarks/depth_rows.py

Refits the calibration without each group (calibrate.by_device, calibrate.by_model_family)
that holds a decode row at depth >= 16k or a gemma-4 row, predicts that group's rows and
prints median / 90th percentile of the absolute error and the median bias of each selection;
then each measured depth slope (tok/s at depth ÷ at depth 0, same device, model and quant)
beside the committed calibration's; last, the prompts' attention at depth: between two depths
of the same prompt run, the measured time the extra context adds per prompt token ÷ the extra
attention work gives the attention kernels' marginal rate, beside the committed calibration's,
with the full-attention layers' query heads per KV head (GQA group) and head size. Only the
folds that hold these rows are run: a few minutes, where `accuracy.py --protocols` runs every
fold.
"""
from __future__ import annotations

import itertools
import statistics
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tools"))

import calibrate
from calibration_data import Obs, load_observations

from tpscalc.catalog import get_model
from tpscalc.estimate.calibration_store import calibration
from tpscalc.estimate.layers import attention_groups

SELECTIONS: dict[str, Callable[[Obs], bool]] = {
    "decode, depth >= 16k": lambda o: o.kind == "decode" and o.depth >= 16384,
    "decode, gemma-4": lambda o: o.kind == "decode" and "gemma-4" in o.model.lower(),
    "prefill, gemma-4": lambda o: o.kind == "prefill" and "gemma-4" in o.model.lower(),
}


def held_out(obs: list[Obs], group: Callable[[Obs], str], name: str) -> None:
    """Print each selection's errors when its rows' groups are left out of the fit."""
    wanted = {group(o) for o in obs if any(sel(o) for sel in SELECTIONS.values())}
    rows = []
    for g in sorted(wanted):
        cal = calibrate.fit([o for o in obs if group(o) != g])
        rows += [(o, calibrate.predict(cal, o)[0]) for o in obs if group(o) == g]
    for label, sel in SELECTIONS.items():
        errs = [p / o.tokens_per_s - 1 for o, p in rows if sel(o)]
        if errs:
            a = sorted(abs(e) for e in errs)
            print(f"| {name} | {label} | {len(errs)} | {statistics.median(a) * 100:.1f} % "
                  f"| {a[int(0.9 * (len(a) - 1))] * 100:.1f} % "
                  f"| {statistics.median(errs) * 100:+.1f} % |")


def slopes(obs: list[Obs]) -> None:
    """Measured and predicted depth slopes at depth >= 16k, and the median slope error."""
    cal = calibration()
    runs: dict[tuple[str, ...], dict[int, Obs]] = defaultdict(dict)
    for o in obs:
        if o.kind == "decode":
            runs[(o.card.name, o.backend, o.model, o.quant,
                  calibrate.publication_of(o))][o.depth] = o
    errs = []
    for key, by_depth in sorted(runs.items()):
        if 0 not in by_depth:
            continue
        m0, p0 = by_depth[0].tokens_per_s, calibrate.predict(cal, by_depth[0])[0]
        for depth in sorted(d for d in by_depth if d >= 16384):
            measured = by_depth[depth].tokens_per_s / m0
            predicted = calibrate.predict(cal, by_depth[depth])[0] / p0
            errs.append(abs(predicted / measured - 1))
            print(f"{key[0][:30]} {key[1]} {key[2][:24]} {key[3]} d{depth}: "
                  f"measured {measured:.2f}, predicted {predicted:.2f}")
    if errs:
        print(f"median slope error {statistics.median(errs) * 100:.1f} % over {len(errs)}")


def attention_shape(model: str) -> tuple[int, int]:
    """(query heads per KV head, query/key head size) of a catalog model's full-attention
    layers (layers.attention_groups; multi-head latent attention: one shared latent, so every
    query head of the layer reads it); (0, 0) without any."""
    arch = get_model(model).architecture
    if arch is None:
        return 0, 0
    full = [g for g in attention_groups(arch) if g.window is None]
    if not full:
        return 0, 0
    g = full[0]
    kv_heads = 1 if arch.is_mla else max(int(g.kv_values) // (g.qk_dim + g.v_dim), 1)
    return g.q_heads // kv_heads, g.qk_dim


def attention_rates(obs: list[Obs]) -> None:
    """Per prompt run measured at two or more depths (same device, backend, model, format,
    prompt and micro-batch): the attention kernels' marginal rate between consecutive depths,
    measured and as the committed calibration has it, TFLOPS of attention work."""
    cal = calibration()
    runs: dict[tuple[object, ...], dict[int, Obs]] = defaultdict(dict)
    for o in obs:
        if o.kind == "prefill" and o.attn_flops:
            runs[(o.card.name, o.backend, o.model, o.quant, o.prompt_tokens, o.ubatch,
                  calibrate.publication_of(o))][o.depth] = o
    print("\n| device | backend | model | format | depths | GQA group | head size | measured "
          "TFLOPS | calibration's | measured ÷ calibration's |\n" + "|---" * 10 + "|")
    ratios: dict[tuple[str, str, bool], list[float]] = defaultdict(list)
    for key, by_depth in sorted(runs.items(), key=lambda kv: tuple(map(str, kv[0]))):
        dev, be, model, quant = map(str, key[:4])
        group, head = attention_shape(model)
        predicted = {d: calibrate.predict(cal, o)[0] for d, o in by_depth.items()}
        for a, b in itertools.pairwise(sorted(by_depth)):
            lo, hi = by_depth[a], by_depth[b]
            work = hi.attn_flops - lo.attn_flops
            dt = 1 / hi.tokens_per_s - 1 / lo.tokens_per_s
            pdt = 1 / predicted[b] - 1 / predicted[a]
            if work <= 0 or dt <= 0 or pdt <= 0:
                continue  # within the runs' noise: no rate to read
            measured, modelled = work / dt / 1e12, work / pdt / 1e12
            ratios[(dev, be, group >= 8)].append(measured / modelled)
            print(f"| {dev} | {be} | {model} | {quant} | {a} → {b} | {group} | {head} "
                  f"| {measured:.2f} | {modelled:.2f} | {measured / modelled:.2f} |")
    print("\n| device | backend | GQA group | pairs | median measured ÷ calibration's |\n"
          "|---|---|---|---|---|")
    for (dev, be, wide), r in sorted(ratios.items()):
        print(f"| {dev} | {be} | {'>= 8' if wide else '< 8'} | {len(r)} "
              f"| {statistics.median(r):.2f} |")


def main() -> int:
    obs = load_observations()
    print("| held out | rows | n | median error | p90 | median bias |\n|---|---|---|---|---|---|")
    held_out(obs, calibrate.by_device, "device")
    held_out(obs, calibrate.by_model_family, "architecture")
    slopes(obs)
    attention_rates(obs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
