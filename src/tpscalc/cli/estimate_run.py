"""What `tpscalc estimate` does once its arguments are parsed, without Typer: the Typer command
(estimate_cmds.py) and the fast path (fast.py) both call `run_estimate`."""
from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator
from dataclasses import asdict
from typing import TYPE_CHECKING, Any, TextIO

from tpscalc.cli import jsonout
from tpscalc.cli.output import echo, fail
from tpscalc.estimate.query import Rig
from tpscalc.report.request import ReportRequest

if TYPE_CHECKING:  # the catalog loads when a command runs, not for --help; pathlib (~5 ms)
    from pathlib import Path  # only with --input

    from tpscalc.catalog.schema import Card

CSV_COLUMNS = ("model", "card", "quant", "context", "backend", "kv_type")  # "gpu" = "card"
# Optional columns beyond those: text_only and llama-bench's -p -n -d -fa -ub.
OPTIONAL_COLUMNS = ("text_only", "n_prompt", "n_gen", "depth", "flash_attn", "n_ubatch",
                    "ram_gib", "ram_bandwidth_gb_s", "ram_type", "ram_channels", "cpu", "pcie",
                    "n_gpu_layers", "n_cpu_moe", "gpus", "parallel", "users_at", "draft", "mtp",
                    "os", "ram_headroom_gib", "gpu_memory_gib", "storage_read_gb_s")


# Python's csv module refuses longer fields; the message below says so in one line.
MAX_FIELD_CHARS = 131_072
# A line is read at most this long (a file without newlines, /dev/zero, ends there), and a
# file at most this many rows: each row is one estimate (~1 ms), so a million is ~20 minutes.
MAX_LINE_CHARS = 1_048_576
MAX_ROWS = 1_000_000
EXIT_SOME_ROWS_FAILED = 3  # every good row is still printed
TABLE_ROWS = 500  # a long CSV prints a table per this many rows, as they are computed


def read_requests(path: Path) -> list[dict[str, str]]:
    """Every row of the CSV at `path` (see `iter_requests`)."""
    return list(iter_requests(path))


def iter_requests(path: Path) -> Iterator[dict[str, str]]:
    """The rows of a CSV with columns model,card,quant,context,backend,kv_type (only model and
    card required; a `gpu` column is read as `card`), one at a time. UTF-8, with or without
    Excel's byte-order mark; header names are trimmed. Anything unreadable, a line over
    MAX_LINE_CHARS or more than MAX_ROWS rows ends with one line and exit code 2."""
    try:
        fh = path.open(newline="", encoding="utf-8-sig")
    except OSError as exc:
        fail(f"cannot read {path}: {exc.strerror or exc}")
    with fh:
        try:
            reader = csv.DictReader(_bounded_lines(fh, path))
            reader.fieldnames = [(name or "").strip().lower() for name in reader.fieldnames or ()]
            columns = set(reader.fieldnames)
            missing = {"model", "card"} - columns - ({"card"} if "gpu" in columns else set())
            if missing:
                fail(f"{path}: missing column(s) {', '.join(sorted(missing))}; "
                     f"expected {','.join(CSV_COLUMNS)}")
            for n, row in enumerate(reader, 1):
                if n > MAX_ROWS:
                    fail(f"{path}: more than {MAX_ROWS:,} rows; split the file")
                yield {k: (v or "").strip() for k, v in row.items() if k and isinstance(v, str)}
        except UnicodeDecodeError as exc:
            fail(f"{path} is not UTF-8 text (byte {exc.start}); save it as CSV UTF-8")
        except csv.Error as exc:
            fail(f"{path}: not a readable CSV ({exc}; a field may hold at most "
                 f"{MAX_FIELD_CHARS:,} characters)")
        except OSError as exc:
            fail(f"cannot read {path}: {exc.strerror or exc}")


def _bounded_lines(fh: TextIO, path: Path) -> Iterator[str]:
    """The lines of `fh`, each read at most MAX_LINE_CHARS long (one line and exit 2 past)."""
    while line := fh.readline(MAX_LINE_CHARS + 1):
        if len(line) > MAX_LINE_CHARS:
            fail(f"{path}: a line longer than {MAX_LINE_CHARS:,} characters; not a CSV")
        yield line


def _table(results: list[dict[str, Any]], lang: str) -> None:
    from tpscalc.cli.console import stdout_console
    from tpscalc.cli.plain_table import Cell, Justify, render_blocks, table_width
    from tpscalc.cli.render import ResultsTable, print_table
    from tpscalc.i18n import format_number, translator
    from tpscalc.report.common import FIT_LABELS, sig
    from tpscalc.report.quality import quality_words

    tr = translator(lang)
    headers = (tr.gettext("Model"), tr.gettext("Card"), tr.gettext("Quantization"),
               tr.gettext("Quality"), tr.gettext("Context (tokens)"), tr.gettext("Needs (GiB)"),
               tr.gettext("Fit"),
               tr.gettext("Decode (tok/s, range)"), tr.gettext("Prefill (tok/s)"),
               tr.gettext("First token (s)"))
    rows = []
    for r in results:
        if r["error"]:
            rows.append((str(r["model"]), str(r["gpu"]), "", "", "", "",
                         tr.gettext("error: {message}").format(message=r["error"]), "", "", ""))
            continue
        d, p = r["decode"], r["prefill"]
        speed = (f"{sig(d['tokens_per_s'], lang)} ({sig(d['low'], lang)}–{sig(d['high'], lang)}, "
                 f"{tr.gettext(d['confidence'])})") if d else "—"
        rows.append((r["model"], r["gpu"], r["quant"] or "—",
                     quality_words(r.get("quality"), lang, tr.gettext) or "—",
                     format_number(r["context"], lang),
                     format_number(r["memory"]["total_gib"], lang, 1),
                     tr.gettext(FIT_LABELS.get(r["fit"], r["fit"])), speed,
                     format_number(p["tokens_per_s"], lang) if p else "—",
                     format_number(p["time_to_first_token_s"], lang, 2) if p else "—"))
    cells = tuple(tuple(Cell(c) for c in row) for row in rows)
    console = stdout_console()
    if table_width(headers, cells, console.width) > console.width:
        # Too narrow for the table even with every cell wrapped at its spaces (an 80-column
        # terminal): one block per estimate, so no number is cut.
        color = console.is_terminal and console.color_system is not None
        console.file.write(render_blocks(headers, cells, color, heading=(0, 1)))
        return
    left_aligned: Justify = "left"
    left = tuple(left_aligned for _ in headers)
    print_table(console, ResultsTable("", headers, left, cells))


def _rig_line(r: dict[str, Any], lang: str) -> str:
    """The settings that realise a rig's placement, in `lang`."""
    from tpscalc.i18n import format_number, translator

    tr = translator(lang)
    if not r["offload_share"] and r["placement"]["devices"]:
        text = tr.gettext("{model} on {gpu}: all on the GPU, llama-server {command}; ollama "
                          "num_ctx {num_ctx}, num_gpu {layers}")
    else:
        text = tr.gettext("{model} on {gpu}: offload {share}%, llama-server {command}; ollama "
                          "num_ctx {num_ctx}, num_gpu {layers}")
    return text.format(model=r["model"], gpu=r["gpu"],
                       share=format_number(round(r["offload_share"] * 100), lang),
                       command=r["command"]["llama_server"],
                       num_ctx=r["command"]["ollama"]["num_ctx"],
                       layers=r["placement"]["n_gpu_layers"])


def _paging_line(host: dict[str, Any], lang: str) -> str:
    """What a paging answer assumed: the RAM left after the OS, the storage rate, in `lang`."""
    from tpscalc.i18n import format_number, translator

    pg = host["paging"]
    text = translator(lang).gettext(
        "Pages from storage: {part} GiB in system RAM, {resident} GiB of it usable after the "
        "{os} headroom of {headroom} GiB (--os, --ram-headroom); each token re-reads about "
        "{read} GiB at {rate} GB/s (--storage-read)")
    return text.format(part=format_number(pg["cpu_part_gib"], lang, 1),
                       resident=format_number(pg["resident_gib"], lang, 1), os=host["os"],
                       headroom=format_number(host["ram_headroom_gib"], lang, 1),
                       read=format_number(pg["read_per_token_gib"], lang, 2),
                       rate=format_number(pg["storage_read_gb_s"], lang, 1))


def _to_fit_lines(r: dict[str, Any], lang: str) -> None:
    """What would make a model that does not fit run, one line each with its speed."""
    from tpscalc.report.fit_ways import fit_way_texts

    heading, lines = fit_way_texts(r, lang)
    echo(heading)
    for line in lines:
        echo("  " + line)


def _range_note(r: dict[str, Any], lang: str) -> None:
    """A line when the model is far smaller than every measured one (its speeds extrapolated)."""
    from tpscalc.report.common import SMALLEST_MEASURED_GIB, outside_measured_range, sig

    weights = r["memory"]["weights_gib"]
    if not outside_measured_range(weights):
        return
    from tpscalc.i18n import format_number, translator

    echo(translator(lang).gettext(
        "{model}: {weights} GiB of weights, far below the smallest model measured "
        "({smallest} GiB): its speeds are extrapolated (low confidence)").format(
        model=r["model"], weights=sig(weights, lang),
        smallest=format_number(SMALLEST_MEASURED_GIB, lang, 2)))


def _runtimes_line(rows: list[dict[str, Any]], lang: str) -> str:
    """The runtimes that run the pair, fastest first, in `lang`."""
    from tpscalc.i18n import translator
    from tpscalc.report.common import sig

    tr = translator(lang)
    items = [f"{r['runtime']} {sig(r['decode_tokens_per_s'], lang)} tok/s ({r['quant']})"
             for r in rows if r["decode_tokens_per_s"]]
    return tr.gettext("Runtimes here, fastest first: {list}").format(list=" · ".join(items))


def _runtime_line(r: dict[str, Any], lang: str) -> str:
    """The runtime an answer is for and the command that realises it, in `lang`."""
    from tpscalc.i18n import translator

    tr = translator(lang)
    lines = [tr.gettext("{model} on {gpu} with {runtime}: {command}").format(
        model=r["model"], gpu=r["gpu"], runtime=r["runtime"], command=r["run"]["command"])]
    lines += [f"  {k}: {v}" for k, v in r["run"]["settings"].items()]
    return "\n".join(lines)


def run_estimate(model: str | None, card: str | None, request: ReportRequest, *,
                 quant: str | None = None, input_csv: Path | None = None, as_json: bool = False,
                 gguf: Path | None = None, config: Path | None = None,
                 config_index: Path | None = None, hf: str | None = None,
                 here: bool = False) -> None:
    """Memory (GiB), fit and speed (tok/s) of one model on one card, or of every row of a CSV."""
    from tpscalc import api

    if input_csv is not None:
        if model or card or gguf or config or hf or here:
            fail("use either --input FILE or --model/--card, not both")
        _print_stream(api.iter_evaluate(iter_requests(input_csv)), request.lang, as_json)
        return
    else:
        if here:
            from tpscalc.cli.file_options import here_rig

        target: str | Card | Rig | None = here_rig(card) if here else card
        if not (model or gguf or config or hf) or not target:
            fail("give --model NAME (or --gguf FILE, --config FILE, --hf REPO) and --card NAME "
                 "(or --here, or --input FILE.csv)")
        try:
            results = [
                api.evaluate(
                    model,
                    target,
                    gguf=gguf,
                    config=config,
                    config_index=config_index,
                    hf=hf,
                    quant=quant,
                    **asdict(request.query),
                    **{k: v for k, v in asdict(request.rig).items() if v is not None},
                    **{k: v for k in ("prefer", "min_tps")  # which fitting quant: choice.py
                       if (v := getattr(request.filters, k)) is not None},
                    **{k: v for k, v in asdict(request.serving).items()
                       if v is not None and v is not False},
                )
            ]
        except api.INPUT_ERRORS as exc:
            fail(str(exc))
    if as_json:
        echo(jsonout.dumps(results[0]))
    else:
        _print_rows(results, request.lang)
    if any(r["error"] for r in results):
        raise SystemExit(EXIT_SOME_ROWS_FAILED)


def _print_rows(results: list[dict[str, Any]], lang: str) -> None:
    """The table of `results`, then each rig's settings line and each file model's sources."""
    _table(results, lang)
    for r in results:
        if r.get("runtime", "llama.cpp") != "llama.cpp" and r.get("run"):
            echo(_runtime_line(r, lang))
        elif r.get("command") and r.get("quant"):  # a rig: the settings that realise it
            echo(_rig_line(r, lang))
        if (r.get("host") or {}).get("paging"):
            echo(_paging_line(r["host"], lang))
        if len(r.get("runtimes") or []) > 1:
            echo(_runtimes_line(r["runtimes"], lang))
        if r.get("serving") or r.get("speculative"):
            from tpscalc.cli.serving_lines import serving_lines

            for line in serving_lines(r, lang):
                echo(line)
        for note in r.get("notes") or ():  # a chip's variant taken for its name ...
            echo(note)
        if r.get("resolved_as"):  # a repository id, a fine-tune, an ollama tag ...
            from tpscalc.cli.report_run import resolved_line

            echo(resolved_line(r["resolved_as"]))
        if not r["error"] and r["decode"]:
            _range_note(r, lang)
        if r.get("to_fit"):
            _to_fit_lines(r, lang)
        if r.get("sources"):  # the model came from the user's file
            echo("Sources: " + "; ".join(f"{k}: {v}" for k, v in r["sources"].items()))


def _print_stream(results: Iterable[dict[str, Any]], lang: str, as_json: bool) -> None:
    """Print results as they come: a JSON array item by item (the same text as dumping the
    whole list), or a table per TABLE_ROWS rows; exit 3 at the end if any row failed."""
    failed, first = False, True
    batch: list[dict[str, Any]] = []
    for r in results:
        failed = failed or bool(r["error"])
        if as_json:
            item = "\n".join(" " + line for line in jsonout.dumps(r).split("\n"))
            echo(("[\n" if first else ",\n") + item, end="")
            first = False
            continue
        batch.append(r)
        if len(batch) == TABLE_ROWS:
            _print_rows(batch, lang)
            batch = []
    if as_json:
        echo("[]" if first else "\n]")
    elif batch or first:
        _print_rows(batch, lang)
    if failed:
        raise SystemExit(EXIT_SOME_ROWS_FAILED)
