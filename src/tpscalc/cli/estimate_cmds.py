"""`tpscalc estimate`: one model on one card, or every row of a CSV file."""
from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Annotated, Any

import typer

from tpscalc.cli.app import app, fail

CSV_COLUMNS = ("model", "gpu", "quant", "context", "backend")
# Optional columns: the KV type and llama-bench's -p -n -d -fa -ub.
OPTIONAL_COLUMNS = ("kv_type", "n_prompt", "n_gen", "depth", "flash_attn", "n_ubatch")


def read_requests(path: Path) -> list[dict[str, str]]:
    """The rows of a CSV with columns model,gpu,quant,context,backend (only model and gpu required)."""
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            missing = {"model", "gpu"} - set(reader.fieldnames or ())
            if missing:
                fail(f"{path}: missing column(s) {', '.join(sorted(missing))}; "
                     f"expected {','.join(CSV_COLUMNS)}")
            return [{k.strip(): (v or "").strip() for k, v in row.items() if k} for row in reader]
    except OSError as exc:
        fail(f"cannot read {path}: {exc.strerror}")


def _table(results: list[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table()
    for col in ("Model", "Card", "Quantization", "Context (tokens)", "Needs (GiB)", "Fit",
                "Decode (tok/s, range)", "Prefill (tok/s)", "First token (s)"):
        table.add_column(col)
    for r in results:
        if r["error"]:
            table.add_row(str(r["model"]), str(r["gpu"]), "", "", "", f"error: {r['error']}")
            continue
        d, p = r["decode"], r["prefill"]
        speed = f"{d['tokens_per_s']:.3g} ({d['low']:.3g}–{d['high']:.3g}, {d['confidence']})" \
            if d else "—"
        table.add_row(r["model"], r["gpu"], r["quant"] or "—", f"{r['context']:,}",
                      f"{r['memory']['total_gib']:.1f}", r["fit"], speed,
                      f"{p['tokens_per_s']:.0f}" if p else "—",
                      f"{p['time_to_first_token_s']:.2f}" if p else "—")
    Console().print(table)


@app.command("estimate")
def estimate_cmd(
    model: Annotated[str | None, typer.Option("--model", help="Model name.")] = None,
    gpu: Annotated[str | None, typer.Option("--gpu", help="Card name.")] = None,
    quant: Annotated[str | None, typer.Option("--quant", help="Quantization (default: least compressed that fits).")] = None,
    context: Annotated[int, typer.Option("--context", help="Context length, tokens.")] = 4096,
    backend: Annotated[str | None, typer.Option("--backend", help="cuda, rocm, vulkan, metal or sycl (default: the vendor's usual one).")] = None,
    kv_type: Annotated[str, typer.Option("--kv-type", help="KV-cache type: f16, q8_0 or q4_0.")] = "f16",
    n_prompt: Annotated[int | None, typer.Option("--n-prompt", help="Prompt tokens the prefill speed is for (llama-bench -p; default: the context).")] = None,
    n_gen: Annotated[int | None, typer.Option("--n-gen", help="Generated tokens the decode speed is for (llama-bench -n; default: the context).")] = None,
    depth: Annotated[int | None, typer.Option("--depth", help="Tokens already in the cache (llama-bench -d; default 0).")] = None,
    flash_attn: Annotated[bool, typer.Option("--flash-attn/--no-flash-attn", help="Flash attention (llama-bench -fa).")] = True,
    n_ubatch: Annotated[int, typer.Option("--n-ubatch", help="Prompt micro-batch, tokens (llama-bench -ub).")] = 512,
    input_csv: Annotated[Path | None, typer.Option("--input", help="CSV with columns model,gpu,quant,context,backend[,kv_type,n_prompt,n_gen,depth,flash_attn,n_ubatch].")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Memory (GiB), fit and speed (tok/s) of one model on one card, or of every row of a CSV."""
    from tpscalc import api
    from tpscalc.report.common import input_errors

    if input_csv is not None:
        if model or gpu:
            fail("use either --input FILE or --model/--gpu, not both")
        results = api.estimate_many(read_requests(input_csv))
    else:
        if not model or not gpu:
            fail("give --model NAME and --gpu NAME (or --input FILE.csv)")
        try:
            results = [api.estimate(model, gpu, quant=quant, context=context, backend=backend,
                                    kv_type=kv_type, n_prompt=n_prompt, n_gen=n_gen,
                                    depth=depth, flash_attn=flash_attn, n_ubatch=n_ubatch)]
        except input_errors() as exc:
            fail(str(exc))
    if as_json:
        data: Any = results if input_csv is not None else results[0]
        typer.echo(json.dumps(data, ensure_ascii=False, indent=1))
    else:
        _table(results)
