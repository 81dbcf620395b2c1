"""`tpscalc serve` (the web site and JSON API) and `tpscalc export-site DIR` (static files)."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tpscalc.cli.app import app, fail


@app.command()
def serve(host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
          port: Annotated[int, typer.Option(help="TCP port.")] = 8000) -> None:
    """Serve the web site and the JSON API (/api/v1/, /openapi.json)."""
    import uvicorn

    from tpscalc.web.app import create_app

    if not 0 < port < 65536:
        fail(f"port must be between 1 and 65535, not {port}")
    uvicorn.run(create_app(), host=host, port=port, log_level="info")


@app.command("export-site")
def export_site(
    directory: Annotated[Path, typer.Argument(help="Folder to write the site into.")],
    limit: Annotated[
        int | None, typer.Option(help="Only the first N models and N cards (a quick preview).")
    ] = None,
    lang: Annotated[
        list[str] | None, typer.Option(help="Languages to export (repeat); default all.")
    ] = None,
) -> None:
    """Write every model and card page, in every language, as static files with relative links."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    from tpscalc.i18n import LANGUAGES
    from tpscalc.web.export import export_site as run_export

    languages = tuple(lang or LANGUAGES)
    unknown = [code for code in languages if code not in LANGUAGES]
    if unknown:
        fail(f"unknown language {unknown[0]!r}; use one of {', '.join(LANGUAGES)}")
    if limit is not None and limit < 0:
        fail("--limit must be 0 or more")
    if directory.exists() and not directory.is_dir():
        fail(f"{directory} exists and is not a folder")
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, transient=True) as progress:
        task = progress.add_task("exporting", total=None)
        result = run_export(
            directory,
            languages=languages,
            limit=limit,
            total=lambda n: progress.update(task, total=n),
            advance=lambda _path: progress.advance(task),
        )
    typer.echo(f"wrote {result.pages} pages and {result.static_files} static files to {directory}")
