"""Wall-clock figures: the CLI side by side with llmfit, reports in process, the static export.

    python benchmarks/speed.py [MODEL] [--all-models] [--export] [--repeat N] [--against SRC]

- The CLI: `tpscalc model MODEL --json`, `tpscalc card 4090 --json` and `tpscalc estimate ...
  --json`, each against llmfit's native `llmfit info` for one model, measured in the same run
  (interleaved rounds, medians) and printed as a ratio. llmfit (PyPI `llmfit`, a native binary)
  is installed into its own venv under the cache folder ($TPSCALC_BENCH_CACHE, else
  ~/.cache/tpscalc-bench) when missing; without it the ratios are left out.
  The tpscalc commands run as a user runs them after `pip install tpscalc`: the venv's
  `tpscalc` console script, with tpscalc's modules compiled to bytecode first (`compileall`;
  pip does that at install time) and PYTHONDONTWRITEBYTECODE unset for the timed commands. An
  editable install run with PYTHONDONTWRITEBYTECODE=1 would recompile every tpscalc module on
  every run (~45 ms), a cost no installed copy has.
- `--against SRC`: the three commands also run from another copy of the package (SRC is its
  `src` folder, e.g. `git archive main src | tar -x -C /tmp/main`), compiled and launched the
  same way, in the same interleaved rounds: the "before" of a change.
- `--export`: `tpscalc export-site` of the whole site into a temporary folder: time, pages, size
  on disk and peak memory (every process of the export together, sampled).

Prints figures; asserts nothing.
"""
from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LLMFIT_MODEL = "bigcode/starcoder2-15b"  # llmfit's name for StarCoder 2 15B


def _seconds(args: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(args, capture_output=True, check=False, env=env)
    return time.perf_counter() - start


def _cache_dir() -> Path:
    return Path(os.environ.get("TPSCALC_BENCH_CACHE") or Path.home() / ".cache" / "tpscalc-bench")


def llmfit_binary() -> Path | None:
    """llmfit in its own venv, installed from PyPI when missing; None when that fails."""
    venv = _cache_dir() / "llmfit-venv"
    binary = venv / "bin" / "llmfit"
    if binary.is_file():
        return binary
    print(f"installing llmfit into {venv} ...", flush=True)
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "llmfit"], check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"llmfit: could not install it ({exc}); no ratios")
        return None
    return binary if binary.is_file() else None


def _as_installed() -> tuple[list[str], dict[str, str]]:
    """The `tpscalc` command and environment a user's `pip install` gives: the console script
    next to this Python (else `python -m tpscalc`), tpscalc's modules compiled to bytecode, and
    PYTHONDONTWRITEBYTECODE unset."""
    import compileall

    import tpscalc

    compileall.compile_dir(str(Path(tpscalc.__file__).parent), quiet=1)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    script = Path(sys.executable).parent / "tpscalc"
    return ([str(script)] if script.is_file() else [sys.executable, "-m", "tpscalc"]), env


def cli_side_by_side(model: str, repeat: int, against: str | None = None) -> None:
    """Median wall times of the three tpscalc commands and llmfit's `info`, interleaved."""
    py = sys.executable
    tps, env = _as_installed()
    hot = {f"model {model!r} --json": ["model", model, "--json"],
           "card 4090 --json": ["card", "4090", "--json"],
           f"estimate --model {model!r} --card 4090 --json": [
               "estimate", "--model", model, "--card", "4090", "--json"]}
    commands: dict[str, tuple[list[str], dict[str, str]]] = {
        "python -c pass": ([py, "-c", "pass"], env),
        **{f"tpscalc {name}": ([*tps, *args], env) for name, args in hot.items()},
        "tpscalc --help": ([*tps, "--help"], env),
    }
    if against:
        import compileall

        compileall.compile_dir(str(Path(against) / "tpscalc"), quiet=1)
        before = dict(env, PYTHONPATH=str(Path(against).resolve()))
        commands.update({f"before: tpscalc {name}": ([*tps, *args], before)
                         for name, args in hot.items()})
    llmfit = llmfit_binary()
    peer = f"llmfit info {LLMFIT_MODEL}"
    if llmfit is not None:
        # A binary that fails (a missing library, an unknown model name) exits in a few ms:
        # timing that would make a meaningless ratio.
        probe = subprocess.run([str(llmfit), "info", LLMFIT_MODEL], capture_output=True,
                               text=True, check=False)
        if probe.returncode != 0:
            why = (probe.stderr.strip().splitlines() or [f"exit {probe.returncode}"])[-1]
            print(f"llmfit does not run here ({why[:160]}); no ratios")
            llmfit = None
    if llmfit is not None:
        commands[peer] = ([str(llmfit), "info", LLMFIT_MODEL], env)
    times: dict[str, list[float]] = {name: [] for name in commands}
    for args, run_env in commands.values():  # warm the file cache
        _seconds(args, run_env)
    for _ in range(repeat):
        for name, (args, run_env) in commands.items():
            times[name].append(_seconds(args, run_env))
    medians = {name: statistics.median(t) for name, t in times.items()}
    width = max(len(n) for n in commands)
    print(f"CLI wall time, median of {repeat} interleaved rounds; tpscalc as installed "
          f"({tps[0] if len(tps) == 1 else 'python -m tpscalc'}, bytecode compiled, "
          f"PYTHONDONTWRITEBYTECODE unset); load average {os.getloadavg()[0]:.1f}:")
    for name, seconds in medians.items():
        ratio = ""
        if llmfit is not None and "tpscalc" in name and "--help" not in name:
            ratio = f"  {seconds / medians[peer]:.2f}× llmfit"
        print(f"  {name:<{width}}  {seconds:.3f} s{ratio}")


def _tree_rss(proc: object) -> int:
    import psutil

    assert isinstance(proc, psutil.Process)
    total = 0
    for p in [proc, *proc.children(recursive=True)]:
        try:
            total += p.memory_info().rss
        except psutil.Error:
            continue
    return total


def export_figures(extra: list[str]) -> None:
    """Time, size on disk and peak memory of `tpscalc export-site` (the whole site)."""
    import resource

    import psutil

    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "site"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = psutil.Popen([sys.executable, "-m", "tpscalc", "export-site", str(target), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        peak = 0
        while proc.poll() is None:
            peak = max(peak, _tree_rss(proc))
            time.sleep(0.2)
        seconds = time.perf_counter() - start
        out, err = proc.communicate()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the export and its workers
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if proc.returncode != 0:
            print(f"export failed ({proc.returncode}): {err.strip()[-500:]}")
            return
        files = [p for p in target.rglob("*") if p.is_file()]
        on_disk = sum(p.stat().st_blocks * 512 for p in files)
        content = sum(p.stat().st_size for p in files)
        print(f"export-site {' '.join(extra)}: {out.strip()}")
        print(f"  {seconds:.1f} s, {len(files)} files, {on_disk / 1e6:.0f} MB on disk "
              f"({content / 1e6:.0f} MB of content), peak memory {peak / 2**20:.0f} MiB "
              f"(all processes), {os.cpu_count()} cores")
        print(f"  CPU time {cpu:.0f} s (all processes; on idle cores about CPU / cores of wall "
              f"time), load average at the end {os.getloadavg()[0]:.1f}")
        shutil.rmtree(target, ignore_errors=True)


def in_process(model: str, all_models: bool) -> None:
    """The catalog load and the reports, in this process."""
    from tpscalc.catalog import store

    start = time.perf_counter()
    cards, models = store.cards(), store.models()
    print(f"catalog load ({len(cards)} cards, {len(models)} models): "
          f"{time.perf_counter() - start:.3f} s")
    from tpscalc.api import card_report, model_report, report_json

    start = time.perf_counter()
    report_json(model_report(model))
    print(f"one model report + JSON (in process):  {time.perf_counter() - start:.3f} s")
    start = time.perf_counter()
    report_json(card_report("RTX 4090"))
    print(f"one card report + JSON ({len(models)} models):   {time.perf_counter() - start:.3f} s")
    if all_models:
        from tpscalc.report.model_report import build_model_report
        from tpscalc.report.request import ReportRequest

        start = time.perf_counter()
        for m in models:
            build_model_report(m, ReportRequest())
        total = time.perf_counter() - start
        print(f"every model's report ({len(models)}):      {total:.1f} s "
              f"({total / len(models) * 1000:.0f} ms each)")


def main() -> None:
    """Print the timings."""
    args = sys.argv[1:]
    values = {args[i + 1] for i, a in enumerate(args[:-1]) if a in ("--repeat", "--against")}
    model = next((a for a in args if not a.startswith("--") and a not in values),
                 "StarCoder 2 15B")
    repeat = int(args[args.index("--repeat") + 1]) if "--repeat" in args else 5
    against = args[args.index("--against") + 1] if "--against" in args else None
    cli_side_by_side(model, repeat, against)
    in_process(model, "--all-models" in args)
    if "--export" in args:
        export_figures([])


if __name__ == "__main__":
    main()
