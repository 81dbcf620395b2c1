"""Accuracy of the speed model by leave-one-device-out cross-validation, beside two baselines.

    python benchmarks/accuracy.py [--no-nested | --committed-bands] [--jobs N]
    python benchmarks/accuracy.py --protocols [--nested-bands] [--jobs N]

For each device (card name) in the measured data: refit the calibration without it (its
bands too, unless --no-nested; --committed-bands takes them from the committed
calibration.json, which `tools/calibrate.py --check` keeps equal to the full fit's: the same
figures as --no-nested in seconds), predict its rows, compare. Baselines on the same rows:
the seed's rule (0.47 × bandwidth ÷ memory needed) and llmfit 1.1.17's rule
(0.55 × bandwidth ÷ (parameters × bytes per parameter)). Prints a Markdown table.

`--protocols` prints the same figures under five ways of holding data out, side by side (issue
24): by device (as above), by architecture family (every row of a model family out at once:
`calibrate.by_model_family`), by source (each data file out, then each publication out:
`file_of`, `calibrate.publication_of`) and by condition (a device's MoE prompts, a device's MoE
decode rows, every row at depth >= 16k: `condition_of`). Only the held-out group's rows are
predicted by each fold; rows of no condition group are not counted under that protocol. The
ranges' bands come from the committed calibration (optimistic: the bands saw every row) unless
`--nested-bands`, which refits them without each group (slow: minutes per fold).

Then the scoreboard devices' rows (llama-bench scoreboard rows of all_sources_public.csv on
devices neither calibration table holds; tools/calibration_data.py), each predicted without
its device like every other row.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tools"))

import calibrate
from calibration_data import GIB, SET_APART, Obs, load_observations, main_rows

from tpscalc.catalog import get_model
from tpscalc.estimate.novelty import (
    kind_of,
    lower_confidence,
    on_slowest,
    tier_band,
    tier_of,
    widened,
)
from tpscalc.estimate.speed_terms import device_class

Row = tuple[Obs, float, float, float, str]
# The targets (issue 11), leave-one-device-out: (label, selector, statistic, target %).
TARGETS = "decode median ≤ 6 %, decode p90 ≤ 20 %, datacenter HBM decode median ≤ 12 %, " \
          "prefill median ≤ 10 %, prefill p90 ≤ 35 %, MoE decode median ≤ 12 %, MoE prefill " \
          "median ≤ 25 %, decode at depth ≥ 16k median ≤ 15 %, ranges ≥ 80 % inside with " \
          "median high ÷ low ≤ 1.5"

# The seed page's rule: 0.47 × bandwidth ÷ memory needed (weights + KV at its context).
SEED_FACTOR = 0.47
# llmfit v1.1.17 (src/hardware.rs, estimate_tps): 0.55 × bandwidth ÷ (params × bytes per param).
LLMFIT_FACTOR = 0.55
# Bytes per parameter llmfit's speed rule uses (AlexsJones/llmfit, quant_bytes_per_param; 0.5
# for any other quant, as there).
LLMFIT_BYTES_PER_PARAM = {"F16": 2.0, "BF16": 2.0, "Q8_0": 1.0, "Q6_K": 0.75, "Q5_K_M": 0.625,
                          "Q4_K_M": 0.5, "Q4_0": 0.5, "Q3_K_M": 0.4375, "Q2_K": 0.3125}


def seed_rule(o: Obs) -> float:
    """Seed's tokens/s: 0.47 × bandwidth ÷ memory needed (weights + KV at the row's context).

    The seed page's own figure (B200, StarCoder 2 15B Q8_0: 0.47 × 8,000 GB/s ÷ 16.8 GB =
    224 ≈ its 226 tok/s) shows the rule; we give it the row's real context and no runtime
    allowance, the most favourable reading.
    """
    return SEED_FACTOR * o.card.bandwidth_gb_s * 1e9 / (o.weights_bytes + o.kv_bytes)


def llmfit_rule(o: Obs) -> float:
    """llmfit's tokens/s: 0.55 × bandwidth ÷ (total parameters × bytes per parameter)."""
    bpp = LLMFIT_BYTES_PER_PARAM.get(o.quant, 0.5)
    return LLMFIT_FACTOR * o.card.bandwidth_gb_s * 1e9 / (o.params_total * bpp)


def _signed_error(o: Obs, predicted: float) -> float:
    """Predicted over measured, less one, %."""
    return (predicted / o.tokens_per_s - 1) * 100


def _errors(pred: np.ndarray, meas: np.ndarray) -> np.ndarray:
    return np.abs(pred / meas - 1.0) * 100


def lodo(obs: Sequence[Obs], nested: bool, committed_bands: bool = False,
         apart: Sequence[Obs] = (), jobs: int = 1) -> list[tuple[Obs, float, float, float, str]]:
    """(obs, predicted, low, high, confidence) for every row, its device left out of the fit;
    the rows of `apart` (never fitted on) after them, predicted by their device's fold. `jobs`
    processes share the folds (the nested run refits every band per device: ~45 min on two)."""
    full: tuple[dict[str, calibrate.Band], dict[str, calibrate.Band]] | None
    if committed_bands:
        from tpscalc.estimate.calibration_store import calibration

        full = (calibration().decode_bands, calibration().prefill_bands)
        nested = False
    else:
        full = None if nested else calibrate.bands(obs)
    devices = sorted({o.card.name for o in (*obs, *apart)})
    _FOLD_ARGS[:] = [obs, apart, nested, full, calibrate.by_device]
    if jobs > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        # fork: the workers inherit the observations instead of unpickling them per fold
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
            folds = list(pool.map(_fold, devices))
    else:
        folds = [_fold(dev) for dev in devices]
    out = [row for own, _ in folds for row in own]
    return out + [row for _, tail in folds for row in tail]


_FOLD_ARGS: list = []  # (obs, apart, nested, full bands, group key) for _fold, set by lodo


def file_of(o: Obs) -> str | None:
    """The leave-one-file-out group: the data file the row comes from."""
    if o.scoreboard:
        return "all_sources_public.csv"
    return "llamacpp_calibration.csv" if o.from_main_csv else "llamacpp_extra_calibration.csv"


def condition_of(o: Obs) -> str | None:
    """The leave-one-condition-out group: a device's MoE prompts, a device's MoE decode rows,
    or every row at depth >= 16k (all devices at once); None for rows of no such condition."""
    if o.depth >= 16384:
        return "depth >= 16k"
    if o.is_moe:
        return f"MoE {o.kind} on {o.card.name}"
    return None


PROTOCOLS: dict[str, Callable[[Obs], str | None]] = {
    "device": calibrate.by_device, "architecture": calibrate.by_model_family, "file": file_of,
    "publication": calibrate.publication_of, "condition": condition_of,
}


def cross_validate(obs: Sequence[Obs], key: Callable[[Obs], str | None], nested: bool,
                   jobs: int = 1) -> list[Row]:
    """(obs, predicted, low, high, confidence) for every row whose `key` is not None, each
    group of rows predicted by a fit without it; the bands are refitted without the group
    when `nested`, else taken from the committed calibration."""
    from tpscalc.estimate.calibration_store import calibration

    full = None if nested else (calibration().decode_bands, calibration().prefill_bands)
    groups = sorted({g for g in map(key, obs) if g is not None})
    _FOLD_ARGS[:] = [obs, (), nested, full, key]
    if jobs > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
            folds = list(pool.map(_fold, groups))
    else:
        folds = [_fold(g) for g in groups]
    return [row for own, _ in folds for row in own]


def _fold(group: str) -> tuple[list[Row], list[Row]]:
    """One group's fold: its rows of the fitted tables and of the set-apart ones."""
    obs, apart, nested, full, key = _FOLD_ARGS
    train = [o for o in obs if key(o) != group]
    cal = calibrate.calibrate(train, with_bands=nested)
    if full is not None:
        cal = calibrate.replace(cal, decode_bands=full[0], prefill_bands=full[1])
    fitted = frozenset(o.model for o in train)
    kinds = frozenset(kind_of(get_model(m).architecture) for m in fitted)
    out: tuple[list[Row], list[Row]] = ([], [])
    for rows, own in zip(out, (obs, apart)):
        for o in (o for o in own if key(o) == group):
            pred, conf = calibrate.predict(cal, o)
            band = calibrate.row_band(cal, o, conf)
            tier = tier_of(get_model(o.model), fitted, kinds)  # how far from the fit's models
            bands = cal.decode_bands if o.kind == "decode" else cal.prefill_bands
            top = band.high_ratio * calibrate.attention_top_ratio(cal, o)
            far = tier_band(bands, conf, tier, o.kind == "prefill" and o.is_moe)
            if far is not None and o.read_factor_slowest > o.read_factor:  # as row_band's
                far = on_slowest(far, calibrate.slowest_ratio(cal, o))
            low, high = widened(pred, pred * band.low_ratio, pred * top, far)
            rows.append((o, pred, low, high, lower_confidence(conf, tier)))
    return out


def summarise(rows: list[tuple[Obs, float, float, float, str]]) -> dict[str, float]:
    """The figures of the table for the model (decode and prefill) and the two baselines."""
    dec = [r for r in rows if r[0].kind == "decode" and np.isfinite(r[1])]
    pre = [r for r in rows if r[0].kind == "prefill" and np.isfinite(r[1])]
    meas = np.array([r[0].tokens_per_s for r in dec])
    pred = np.array([r[1] for r in dec])
    lo, hi = np.array([r[2] for r in dec]), np.array([r[3] for r in dec])
    err = _errors(pred, meas)
    out = {"n": len(dec), "median": float(np.median(err)), "p90": float(np.percentile(err, 90)),
           "inside": float(np.mean((meas >= lo) & (meas <= hi)) * 100),
           "ratio": float(np.median(hi / lo))}
    if pre:
        pre_err = _errors(np.array([r[1] for r in pre]),
                          np.array([r[0].tokens_per_s for r in pre]))
        out["prefill_median"] = float(np.median(pre_err))
        out["prefill_n"] = len(pre)
    for name, rule in (("seed", seed_rule), ("llmfit", llmfit_rule)):
        e = _errors(np.array([rule(r[0]) for r in dec]), meas)
        out[f"{name}_median"], out[f"{name}_p90"] = float(np.median(e)), float(np.percentile(e, 90))
    return out


def weight_size_error(obs: Sequence[Obs]) -> tuple[float, float, int]:
    """Median and max |computed weights − llama-bench size| ÷ size, %, over distinct files."""
    seen = {(o.model, o.quant): o for o in obs
            if o.size_gib and o.bytes_source == "architecture" and o.from_main_csv}
    err = [abs(o.weights_bytes / GIB / o.size_gib - 1) * 100 for o in seen.values()]
    return (float(np.median(err)), float(np.max(err)), len(err)) if err else (np.nan, np.nan, 0)


def by_level(rows: list[tuple[Obs, float, float, float, str]]) -> str:
    """A line per confidence level: rows, median error, share inside the range."""
    lines = []
    for level in ("high", "medium", "low"):
        sel = [r for r in rows if r[4] == level and r[0].kind == "decode"]
        if sel:
            m = np.array([r[0].tokens_per_s for r in sel])
            e = _errors(np.array([r[1] for r in sel]), m)
            inside = np.mean([(r[2] <= r[0].tokens_per_s <= r[3]) for r in sel]) * 100
            lines.append(f"- decode, {level} confidence: {len(sel)} rows, median error "
                         f"{np.median(e):.1f} %, {inside:.0f} % inside the range")
    return "\n".join(lines)


def _stats(sel: Sequence[Row]) -> tuple[int, float, float, float, float, float]:
    """(rows, median error %, p90 %, mean signed error %, % inside the range, median high ÷ low)."""
    sel = [r for r in sel if np.isfinite(r[1]) and r[1] > 0]
    if not sel:
        return 0, np.nan, np.nan, np.nan, np.nan, np.nan
    m = np.array([r[0].tokens_per_s for r in sel])
    p = np.array([r[1] for r in sel])
    e = _errors(p, m)
    inside = np.mean([(r[2] <= r[0].tokens_per_s <= r[3]) for r in sel]) * 100
    bias = float(np.median((p / m - 1) * 100))
    return (len(sel), float(np.median(e)), float(np.percentile(e, 90)), bias, float(inside),
            float(np.median([r[3] / r[2] for r in sel])))


def _line(label: str, sel: Sequence[Row]) -> str:
    n, med, p90, bias, inside, ratio = _stats(sel)
    if not n:
        return f"| {label} | 0 | – | – | – | – | – |"
    return (f"| {label} | {n} | {med:.1f} % | {p90:.1f} % | {bias:+.1f} % | {inside:.0f} % "
            f"| {ratio:.2f} |")


def new_layout(o: Obs) -> bool:
    """A 2026 layout: hybrid linear-attention / state-space layers (Qwen3.5-3.6, Nemotron
    Nano 2 / Nemotron 3) or Gemma 4's global heads of their own shape beside sliding ones."""
    a = get_model(o.model).architecture
    return a is not None and (a.linear_attention_layers > 0 or a.global_head_dim is not None
                              or bool(a.layer_mixers and set(a.layer_mixers) - {"A"}))


GROUPS: dict[str, Callable[[Obs], bool]] = {
    "all": lambda o: True,
    "llamacpp_calibration.csv rows": lambda o: o.from_main_csv,
    "scoreboard devices (all_sources_public.csv)": lambda o: o.scoreboard,
    "recent builds (2024-2025)": lambda o: o.era > 0,
    "2023 builds (era term)": lambda o: o.era == 0,
    "mixture of experts": lambda o: o.is_moe,
    "depth ≥ 16k": lambda o: o.depth >= 16384,
    "2026 layouts (hybrid linear attention, Gemma 4)": new_layout,
}


def breakdown(rows: Sequence[Row]) -> str:
    """Markdown table: each figure by kind × (all, group, backend, device class), worst rows."""
    head = [("| rows (leave-one-device-out) | n | median error | p90 | median bias | inside range "
            "| median high ÷ low |"), "|---|---|---|---|---|---|---|"]
    lines = []
    for kind in ("decode", "prefill"):
        k_rows = [r for r in rows if r[0].kind == kind]
        for name, sel in GROUPS.items():
            lines.append(_line(f"{kind}, {name}", [r for r in k_rows if sel(r[0])]))
        for be in sorted({r[0].backend for r in k_rows}):
            lines.append(_line(f"{kind}, backend {be}", [r for r in k_rows if r[0].backend == be]))
        for cls in ("datacenter HBM", "consumer GDDR", "Apple", "iGPU / unified"):
            lines.append(_line(f"{kind}, {cls}",
                               [r for r in k_rows if device_class(r[0].card) == cls]))
    return "\n".join(head + lines)


def _cell(stats: tuple[int, float, float, float, float, float]) -> str:
    """"median / p90 / bias / inside" of one selection's _stats, for the protocols' table."""
    n, med, p90, bias, inside, _ = stats
    if not n:
        return "–"
    return f"{med:.1f} / {p90:.0f} / {bias:+.0f} / {inside:.0f} % ({n})"


def protocol_table(results: dict[str, Sequence[Row]]) -> str:
    """Markdown: one column per protocol, one line per kind × (all, group, backend, device
    class); each cell median error / p90 / median bias / share inside the range (rows)."""
    names = list(results)
    head = ["| rows | " + " | ".join(f"leave one {n} out" for n in names) + " |",
            "|---|" + "---|" * len(names)]
    lines = []
    selectors: list[tuple[str, Callable[[Obs], bool]]] = []
    for name, sel in GROUPS.items():
        selectors.append((name, sel))
    for be in sorted({r[0].backend for rows in results.values() for r in rows}):
        selectors.append((f"backend {be}", lambda o, be=be: o.backend == be))
    for cls in ("datacenter HBM", "consumer GDDR", "Apple", "iGPU / unified"):
        selectors.append((cls, lambda o, cls=cls: device_class(o.card) == cls))
    under = []  # groups of UNDER_MIN_ROWS rows or more under UNDER_COVERAGE inside
    for kind in ("decode", "prefill"):
        for label, sel in selectors:
            stats = {n: _stats([r for r in results[n] if r[0].kind == kind and sel(r[0])])
                     for n in names}
            cells = [_cell(stats[n]) for n in names]
            if any(c != "–" for c in cells):
                lines.append(f"| {kind}, {label} | " + " | ".join(cells) + " |")
            under += [f"{kind}, {label}, leave one {n} out: {st[4]:.0f} % ({st[0]})"
                      for n, st in stats.items()
                      if st[0] >= UNDER_MIN_ROWS and st[4] < UNDER_COVERAGE]
    for kind in ("decode", "prefill"):
        worst_cov = min(((_stats([r for r in results[n] if r[0].kind == kind])[4], n)
                         for n in names if results[n]), default=(np.nan, "–"))
        lines.append(f"\nWorst {kind} coverage: {worst_cov[0]:.0f} % inside (leave one "
                     f"{worst_cov[1]} out).")
    lines.append(f"\nGroups of {UNDER_MIN_ROWS} rows or more under {UNDER_COVERAGE:.0f} % "
                 f"inside: " + ("; ".join(under) if under else "none") + ".")
    return "\n".join(head + lines)


# The floor for every group's share inside its range, and the fewest rows a group needs
# to be named under it (one or two rows are a row's luck, not a group's coverage).
UNDER_COVERAGE = 75.0
UNDER_MIN_ROWS = 5


def worst(rows: Sequence[Row], n: int = 10) -> str:
    """The `n` rows of largest relative error, as a Markdown table."""
    ok = [r for r in rows if np.isfinite(r[1]) and r[1] > 0]
    ok.sort(key=lambda r: -abs(r[1] / r[0].tokens_per_s - 1))
    lines = ["| device | backend | model | quant | test | measured t/s | predicted t/s | error |",
             "|---|---|---|---|---|---|---|---|"]
    for o, p, *_ in ok[:n]:
        bias = (p / o.tokens_per_s - 1) * 100
        lines.append(f"| {o.card.name} | {o.backend} | {o.model} | {o.quant} | {o.test} | "
                     f"{o.tokens_per_s:,.1f} | {p:,.1f} | {bias:+.0f} % |")
    return "\n".join(lines)


def scoreboard_table(rows: Sequence[Row]) -> str:
    """Markdown table of the scoreboard devices' rows (calibration_data.SCOREBOARD_DEVICES),
    each predicted without its device: the external check these rows were before they joined
    the fit."""
    sel = sorted((r for r in rows if r[0].scoreboard),
                 key=lambda r: (r[0].card.name, r[0].test, r[0].flash_attn))
    lines = ["| scoreboard device (catalog card) | test | measured t/s | predicted t/s | error |",
             "|---|---|---|---|---|"]
    for o, p, *_ in sel:
        lines.append(f"| {o.card.name} | {o.test} fa {'on' if o.flash_attn else 'off'} | "
                     f"{o.tokens_per_s:,.0f} | {p:,.0f} | {_signed_error(o, p):+.0f} % |")
    return "\n".join(lines)


def set_apart_table(apart: Sequence[Row], both: Sequence[Row]) -> str:
    """The SET_APART tables' rows (calibration_data.py: out of the fit and of the figures above),
    each predicted without its device, and the main figures with them counted in."""
    lines = ["Set apart (calibration_data.SET_APART; not fitted on, not in the figures above):",
             *(f"- {dev}, {date}: {why}." for (dev, date), why in SET_APART.items()), "",
             "| device | model | quant | test | measured t/s | predicted t/s | error |",
             "|---|---|---|---|---|---|---|"]
    for o, p, *_ in apart:
        lines.append(f"| {o.card.name} | {o.model} | {o.quant} | {o.test} | "
                     f"{o.tokens_per_s:,.1f} | {p:,.1f} | {_signed_error(o, p):+.0f} % |")
    lines.append("")
    for kind in ("decode", "prefill"):
        _, med, p90, *_ = _stats([r for r in both if r[0].kind == kind])
        lines.append(f"With them, {kind}: median error {med:.1f} %, p90 {p90:.1f} %.")
    return "\n".join(lines)


def table(s: dict[str, float], size: tuple[float, float, int]) -> str:
    """The Markdown table the README shows."""
    f: Callable[[float], str] = lambda v: f"{v:.1f} %"
    return "\n".join(
        [
            (
                "| decode, leave-one-device-out | tpscalc | seed rule (0.47 × BW ÷ memory) "
                "| llmfit 1.1.17 (0.55 × BW ÷ params × bytes) |"
            ),
            "|---|---|---|---|",
            (
                f"| median absolute error | {f(s['median'])} | {f(s['seed_median'])} "
                f"| {f(s['llmfit_median'])} |"
            ),
            (f"| 90th percentile error | {f(s['p90'])} | {f(s['seed_p90'])} "
             f"| {f(s['llmfit_p90'])} |"),
            f"| measurements inside the stated range | {f(s['inside'])} | – | – |",
            f"| median high ÷ low of the range | {s['ratio']:.2f} | – | – |",
            f"| prefill median absolute error | {f(s.get('prefill_median', np.nan))} | – | – |",
            (
                f"| weight size vs llama-bench size (median / max) "
                f"| {size[0]:.2f} % / {size[1]:.2f} % | – | – |"
            ),
            "",
            (
                f"{int(s['n'])} decode and {int(s.get('prefill_n', 0))} prefill measurements; "
                f"{size[2]} distinct model files for the weight size."
            ),
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the cross-validation and print the table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--main-only",
        action="store_true",
        help="fit on llamacpp_calibration.csv alone (no MoE/depth rows)",
    )
    ap.add_argument(
        "--no-nested",
        action="store_true",
        help="take the range bands from the full fit (faster, slightly optimistic)",
    )
    ap.add_argument(
        "--jobs", type=int, default=1,
        help="processes sharing the left-out devices (the nested run takes ~90 min on one)",
    )
    ap.add_argument(
        "--committed-bands",
        action="store_true",
        help="take the range bands from the committed calibration.json (same as --no-nested "
             "while it is up to date; seconds)",
    )
    ap.add_argument(
        "--protocols",
        action="store_true",
        help="the figures under leave-one-device/architecture/file/publication/condition-out",
    )
    ap.add_argument(
        "--nested-bands",
        action="store_true",
        help="with --protocols: refit the range bands without each held-out group (slow)",
    )
    args = ap.parse_args(argv)
    obs = load_observations(extra=not args.main_only)
    if args.protocols:
        results = {name: cross_validate(obs, key, args.nested_bands, args.jobs)
                   for name, key in PROTOCOLS.items()}
        print(f"{len(obs)} measurements; each cell: median absolute error % / p90 % / median "
              f"bias % / inside the range % (rows). Bands: "
              f"{'refitted per fold' if args.nested_bands else 'the committed calibration'}.\n")
        print(protocol_table(results))
        for name, rows in results.items():
            print(f"\nWorst rows, leave one {name} out:\n")
            print(worst(rows, 5))
        return 0
    from tpscalc.catalog import get_card, get_model

    apart = list(main_rows(get_card, get_model, set_apart=True))
    both = lodo(obs, nested=not args.no_nested, committed_bands=args.committed_bands,
                apart=apart, jobs=args.jobs)
    rows, apart_rows = both[:len(both) - len(apart)], both[len(both) - len(apart):]
    print(
        f"{sum(o.from_main_csv for o in obs)} rows from llamacpp_calibration.csv, "
        f"{sum(not o.from_main_csv and not o.scoreboard for o in obs)} from "
        f"llamacpp_extra_calibration.csv, {sum(o.scoreboard for o in obs)} scoreboard rows "
        f"from all_sources_public.csv\n"
    )
    print(table(summarise(rows), weight_size_error(obs)))
    print()
    print(by_level(rows))
    print()
    print(f"Targets (issue 11): {TARGETS}.\n")
    print(breakdown(rows))
    print()
    print("Worst ten rows:\n")
    print(worst(rows))
    print()
    print(scoreboard_table(rows))
    print()
    print(set_apart_table(apart_rows, both))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
