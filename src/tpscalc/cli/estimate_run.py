"""What `tpscalc estimate` does once its arguments are parsed, without Typer: the Typer command
(estimate_cmds.py) and the fast path (fast.py) both call `run_estimate`."""
from __future__ import annotations

import csv
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

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
                    "n_gpu_layers", "n_cpu_moe", "gpus", "parallel", "users_at", "draft", "mtp")


# Python's csv module refuses longer fields; the message below says so in one line.
MAX_FIELD_CHARS = 131_072
EXIT_SOME_ROWS_FAILED = 3  # every good row is still printed


def read_requests(path: Path) -> list[dict[str, str]]:
    """The rows of a CSV with columns model,card,quant,context,backend,kv_type (only model and
    card required; a `gpu` column is read as `card`). UTF-8, with or without Excel's byte-order
    mark; header names are trimmed. Anything unreadable ends with one line and exit code 2."""
    try:
        with path.open(newline="", encoding="utf-8-sig") as fh:
            reader = csv.DictReader(fh)
            reader.fieldnames = [(name or "").strip().lower() for name in reader.fieldnames or ()]
            columns = set(reader.fieldnames)
            missing = {"model", "card"} - columns - ({"card"} if "gpu" in columns else set())
            if missing:
                fail(f"{path}: missing column(s) {', '.join(sorted(missing))}; "
                     f"expected {','.join(CSV_COLUMNS)}")
            return [{k: (v or "").strip() for k, v in row.items() if k and isinstance(v, str)}
                    for row in reader]
    except UnicodeDecodeError as exc:
        fail(f"{path} is not UTF-8 text (byte {exc.start}); save it as CSV UTF-8")
    except csv.Error as exc:
        fail(f"{path}: not a readable CSV ({exc}; a field may hold at most "
             f"{MAX_FIELD_CHARS:,} characters)")
    except OSError as exc:
        fail(f"cannot read {path}: {exc.strerror or exc}")


def _table(results: list[dict[str, Any]], lang: str) -> None:
    from rich.table import Table

    from tpscalc.cli.console import stdout_console
    from tpscalc.i18n import format_number, translator
    from tpscalc.report.common import FIT_LABELS, sig

    tr = translator(lang)
    table = Table()
    for col in (tr.gettext("Model"), tr.gettext("Card"), tr.gettext("Quantization"),
                tr.gettext("Context (tokens)"), tr.gettext("Needs (GiB)"), tr.gettext("Fit"),
                tr.gettext("Decode (tok/s, range)"), tr.gettext("Prefill (tok/s)"),
                tr.gettext("First token (s)")):
        table.add_column(col)
    for r in results:
        if r["error"]:
            table.add_row(str(r["model"]), str(r["gpu"]), "", "", "",
                          tr.gettext("error: {message}").format(message=r["error"]))
            continue
        d, p = r["decode"], r["prefill"]
        speed = (f"{sig(d['tokens_per_s'], lang)} ({sig(d['low'], lang)}–{sig(d['high'], lang)}, "
                 f"{tr.gettext(d['confidence'])})") if d else "—"
        table.add_row(r["model"], r["gpu"], r["quant"] or "—", format_number(r["context"], lang),
                      format_number(r["memory"]["total_gib"], lang, 1),
                      tr.gettext(FIT_LABELS.get(r["fit"], r["fit"])), speed,
                      format_number(p["tokens_per_s"], lang) if p else "—",
                      format_number(p["time_to_first_token_s"], lang, 2) if p else "—")
    stdout_console().print(table)


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
        results = api.evaluate_many(read_requests(input_csv))
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
                    **{k: v for k, v in asdict(request.serving).items()
                       if v is not None and v is not False},
                )
            ]
        except api.INPUT_ERRORS as exc:
            fail(str(exc))
    if as_json:
        data: Any = results if input_csv is not None else results[0]
        echo(jsonout.dumps(data))
    else:
        _table(results, request.lang)
        for r in results:
            if r.get("command") and r.get("quant"):  # a rig: the settings that realise it
                echo(_rig_line(r, request.lang))
            if r.get("serving") or r.get("speculative"):
                from tpscalc.cli.serving_lines import serving_lines

                for line in serving_lines(r, request.lang):
                    echo(line)
            if r.get("sources"):  # the model came from the user's file
                echo("Sources: " + "; ".join(f"{k}: {v}" for k, v in r["sources"].items()))
    if any(r["error"] for r in results):
        raise SystemExit(EXIT_SOME_ROWS_FAILED)
