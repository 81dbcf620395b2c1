"""Write the whole site as static files with relative links (every page at default settings).

A model or card page holds its table's first page of rows; every row is in one data file per
report, shared by the languages (static_data.py), that the page's script pages and searches.

The site is written into a temporary folder next to the target and moved into place at the end,
so an interrupted export leaves no half-written site. The estimates behind a model or card page
are made once for all languages (only the texts differ), and with several cores the pages are
rendered by that many processes.
"""
from __future__ import annotations

import errno
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from tpscalc.catalog import store
from tpscalc.i18n import LANGUAGES
from tpscalc.report.request import ReportRequest
from tpscalc.web import pages, reports, static_data
from tpscalc.web.render import page_file, render_page

Unit = tuple[str, str]  # (kind, slug): "root", "index" (slug = language), "model", "card"

# Below this many units the processes cost more to start than they save.
MIN_UNITS_FOR_PROCESSES = 40


@dataclass(frozen=True)
class ExportResult:
    """What an export wrote."""

    pages: int
    static_files: int
    directory: Path


def plan(languages: Sequence[str] = LANGUAGES, limit: int | None = None) -> list[Unit]:
    """The units of work: the root, each language's indexes and credits, each model, each card."""
    models = [m.slug for m in store.models()][:limit]
    cards = [c.slug for c in store.cards()][:limit]
    return ([("root", "")] + [("index", lang) for lang in languages]
            + [("model", s) for s in models] + [("card", s) for s in cards])


def pages_of(unit: Unit, languages: Sequence[str]) -> int:
    """How many pages a unit writes."""
    kind = unit[0]
    return 1 if kind == "root" else 3 if kind == "index" else len(languages)


def _render_unit(unit: Unit, languages: Sequence[str]) -> Iterator[tuple[str, str]]:
    """(site path, HTML) of every page of `unit`."""
    kind, slug = unit
    empty: dict[str, str] = {}
    if kind == "root":
        yield "/", render_page(languages[0], "root.html", "/", export=True)
    elif kind == "index":
        lang = slug
        yield (f"/{lang}/models",
               pages.models_index(lang, empty, f"/{lang}/models", export=True))
        yield f"/{lang}/cards", pages.cards_index(lang, empty, f"/{lang}/cards", export=True)
        yield (f"/{lang}/credits",
               render_page(lang, "credits.html", f"/{lang}/credits", export=True))
    else:
        page = pages.model_page if kind == "model" else pages.card_page
        reports.prime(kind, slug, ReportRequest(), languages)
        report = (reports.model_report if kind == "model" else reports.card_report)(
            slug, ReportRequest(lang=languages[0]))
        yield static_data.rows_path(kind, slug), static_data.rows_script(kind, report)
        for lang in languages:
            path = f"/{lang}/{kind}s/{slug}"
            yield path, page(slug, ReportRequest(lang=lang), path, export=True)
            reports.forget(kind, slug, ReportRequest(lang=lang))


def write_unit(directory: Path, unit: Unit, languages: Sequence[str]) -> int:
    """Write the pages of `unit` (and its table's data file) under `directory`; returns how many
    pages."""
    count = 0
    for path, text in _render_unit(unit, languages):
        target = directory / page_file(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        count += not path.startswith("/static/")
    return count


def write_dictionaries(directory: Path, languages: Sequence[str]) -> int:
    """Write each language's dictionary for the tables' script; returns how many files."""
    for lang in languages:
        target = directory / page_file(static_data.dictionary_path(lang))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(static_data.dictionary_script(lang), encoding="utf-8")
    return len(languages)


def copy_static(directory: Path) -> int:
    """Copy the CSS and JavaScript; returns how many files."""
    source = Path(str(resources.files("tpscalc.web").joinpath("static")))
    target = directory / "static"
    target.mkdir(parents=True, exist_ok=True)
    count = 0
    for f in source.iterdir():
        if f.is_file():
            shutil.copy2(f, target / f.name)
            count += 1
    return count


_JOB: tuple[Path, tuple[str, ...]] | None = None  # a worker process's folder and languages


def _worker_unit(unit: Unit) -> int:
    assert _JOB is not None
    return write_unit(_JOB[0], unit, _JOB[1])


def _write_all(
    directory: Path, todo: list[Unit], languages: tuple[str, ...], jobs: int,
    advance: Callable[[int], None],
) -> int:
    """Write every unit (in `jobs` forked processes when that pays); returns the page count."""
    global _JOB
    if jobs <= 1 or len(todo) < MIN_UNITS_FOR_PROCESSES or "fork" not in _start_methods():
        written = 0
        for unit in todo:
            n = write_unit(directory, unit, languages)
            written += n
            advance(n)
        return written
    import multiprocessing

    store.cards(), store.models()  # loaded once, inherited by the forked workers
    _JOB = (directory, languages)
    try:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            written = 0
            for n in pool.imap_unordered(_worker_unit, todo, chunksize=4):
                written += n
                advance(n)
            return written
    finally:
        _JOB = None


def _start_methods() -> list[str]:
    import multiprocessing

    return multiprocessing.get_all_start_methods()


def export_site(
    directory: Path,
    *,
    languages: Sequence[str] = LANGUAGES,
    limit: int | None = None,
    jobs: int | None = None,
    replace: bool = False,
    advance: Callable[[int], None] | None = None,
    total: Callable[[int], None] | None = None,
) -> ExportResult:
    """Write every page of `plan()` into `directory`, all at once at the end.

    `directory` must be absent or empty unless `replace` (then its old content goes, but only
    once the new site is complete). `advance(n)` is called as pages are written."""
    langs = tuple(languages)
    directory = directory.resolve()  # "." has a name and a parent to write next to
    if directory.is_dir() and any(directory.iterdir()) and not replace:
        raise FileExistsError(17, "the folder is not empty", str(directory))
    todo = plan(langs, limit)
    if total:
        total(sum(pages_of(u, langs) for u in todo))
    directory.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", suffix=".partial",
                                 dir=directory.parent))
    try:
        written = _write_all(work, todo, langs, jobs or os.cpu_count() or 1,
                             advance or (lambda _n: None))
        statics = copy_static(work) + write_dictionaries(work, langs)
        work.chmod(0o755)  # mkdtemp makes it private; a site folder is readable like the others
        _move_into_place(work, directory, replace)
    except BaseException:  # an interrupt too: no half-written site stays behind
        shutil.rmtree(work, ignore_errors=True)
        raise
    return ExportResult(written, statics, directory)


def _move_into_place(work: Path, directory: Path, replace: bool) -> None:
    """Rename `work` to `directory`. Without `replace`, the rename itself is the check: POSIX
    rename(2) takes the place of an absent or empty folder only, so of two exports started
    into one empty folder exactly one lands and the other fails (FileExistsError). With it,
    an old `directory` is set aside first, then deleted."""
    if not replace:
        try:
            work.rename(directory)
        except OSError as exc:
            if exc.errno in (errno.EEXIST, errno.ENOTEMPTY):
                raise FileExistsError(errno.EEXIST, "the folder is not empty (another export "
                                      "may have written it)", str(directory)) from None
            raise
        return
    old: Path | None = None
    if directory.exists():
        old = directory.parent / f"{work.name}.old"
        directory.rename(old)
    try:
        work.rename(directory)
    except BaseException:
        if old is not None:
            old.rename(directory)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
