"""`tpscalc serve` (the web site and JSON API) and `tpscalc export-site DIR` (static files)."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from tpscalc.cli.app import app, fail


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.")] = 8000,
    workers: Annotated[int | None, typer.Option(
        help="Worker processes (default: one per core).")] = None,
    allowed_host: Annotated[list[str] | None, typer.Option(
        "--allowed-host", help="Host header to answer (repeat); default any (local use).")] = None,
    max_in_flight: Annotated[int, typer.Option(
        help="Requests one worker runs at once; more wait up to 2 s, then get 503.")] = 32,
    deadline: Annotated[float, typer.Option(help="Seconds before a request gets 503.")] = 10.0,
    access_log: Annotated[bool, typer.Option(
        help="One line per request on stdout.")] = True,
) -> None:
    """Serve the web site and the JSON API (/api/v1/, /openapi.json, /healthz)."""
    import logging
    import socket

    import uvicorn

    from tpscalc.web.app import LIMITS_ENV, limits_to_env
    from tpscalc.web.serving import PROTOCOL, log_config

    if not 0 < port < 65536:
        fail(f"port must be between 1 and 65535, not {port}")
    workers = workers or os.cpu_count() or 1
    if not 1 <= workers <= 64 or not 1 <= max_in_flight <= 10_000 or not 0 < deadline <= 600:
        fail("--workers 1..64, --max-in-flight 1..10000 and --deadline 0..600 s")
    try:  # one line instead of uvicorn's traceback when the port is taken
        with socket.create_server((host, port)):
            pass
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
    os.environ[LIMITS_ENV] = limits_to_env(max_in_flight, deadline, allowed_host or [])
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    shown = f"[{host}]" if ":" in host else host
    typer.echo(f"tpscalc: serving http://{shown}:{port}/ with {workers} worker"
               f"{'s' if workers > 1 else ''} (Ctrl+C stops)", err=True)
    # TCP_NODELAY on each connection: without it, uvicorn's multi-worker socket makes every
    # keep-alive request after the first wait ~40 ms (tpscalc.web.serving).
    uvicorn.run("tpscalc.web.app:app_from_env", factory=True, host=host, port=port,
                workers=workers, http=PROTOCOL, log_config=log_config(access_log),
                log_level=None, access_log=access_log, server_header=False)


@app.command("export-site")
def export_site(
    directory: Annotated[str, typer.Argument(help="Folder to write the site into.")],
    limit: Annotated[
        int | None, typer.Option(help="Only the first N models and N cards (a quick preview).")
    ] = None,
    lang: Annotated[
        list[str] | None, typer.Option(help="Languages to export (repeat); default all.")
    ] = None,
    force: Annotated[bool, typer.Option(
        "--force", help="Replace the folder's content (once the new site is complete).")] = False,
    jobs: Annotated[int | None, typer.Option(
        help="Processes rendering pages (default: one per core).")] = None,
) -> None:
    """Write every model and card page, in every language, as static files with relative links.

    The site is written to a temporary folder next to DIRECTORY and moved into place at the end:
    an interrupted export leaves nothing half-written."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    from tpscalc.i18n import LANGUAGES
    from tpscalc.web.export import export_site as run_export

    if not directory.strip():  # Path("") would be the current folder
        fail('give a folder to write the site into ("" is none)')
    folder = Path(directory)
    languages = tuple(lang or LANGUAGES)
    unknown = [code for code in languages if code not in LANGUAGES]
    if unknown:
        fail(f"unknown language {unknown[0]!r}; use one of {', '.join(LANGUAGES)}")
    if limit is not None and limit < 0:
        fail("--limit must be 0 or more")
    if jobs is not None and not 1 <= jobs <= 64:
        fail("--jobs must be between 1 and 64")
    if folder.exists() and not folder.is_dir():
        fail(f"{folder} exists and is not a folder")
    if folder.is_dir() and any(folder.iterdir()) and not force:
        fail(f"{folder} is not empty; use --force to replace its content")
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
    )
    from rich.console import Console

    console = Console(stderr=True)  # stdout keeps the one summary line; no bar when piped
    try:
        with Progress(*columns, console=console, transient=True,
                      disable=not console.is_terminal) as progress:
            task = progress.add_task("exporting", total=None)
            result = run_export(
                folder,
                languages=languages,
                limit=limit,
                jobs=jobs,
                replace=force,
                total=lambda n: progress.update(task, total=n),
                advance=lambda n: progress.advance(task, n),
            )
    except OSError as exc:  # a folder it may not write, a parent that is a file, a full disk
        where = exc.filename or folder
        fail(f"cannot write the site to {where}: {exc.strerror or exc}")
    typer.echo(f"wrote {result.pages} pages and {result.static_files} static files to {folder}")
