"""Write the whole site as static files with relative links (every page at default settings)."""
from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from importlib import resources
from pathlib import Path

from tpscalc.catalog import store
from tpscalc.i18n import LANGUAGES
from tpscalc.report.request import ReportRequest
from tpscalc.web import pages
from tpscalc.web.render import page_file, render_page

Page = tuple[str, Callable[[], str]]  # (site path, renderer)


@dataclass(frozen=True)
class ExportResult:
    """What an export wrote."""

    pages: int
    static_files: int
    directory: Path


def plan(languages: Sequence[str] = LANGUAGES, limit: int | None = None) -> list[Page]:
    """Every page to write: root, then per language the indexes, credits, models and cards."""
    models = [m.slug for m in store.models()][:limit]
    cards = [c.slug for c in store.cards()][:limit]
    out: list[Page] = [("/", lambda: render_page(languages[0], "root.html", "/", export=True))]
    for lang in languages:
        out += _language_pages(lang, models, cards)
    return out


def _language_pages(lang: str, models: list[str], cards: list[str]) -> Iterator[Page]:
    empty: dict[str, str] = {}
    yield (
        f"/{lang}/models",
        lambda: pages.models_index(lang, empty, f"/{lang}/models", export=True),
    )
    yield (f"/{lang}/cards", lambda: pages.cards_index(lang, empty, f"/{lang}/cards", export=True))
    yield (
        f"/{lang}/credits",
        lambda: render_page(lang, "credits.html", f"/{lang}/credits", export=True),
    )
    for slug in models:
        path = f"/{lang}/models/{slug}"
        yield (path, partial(pages.model_page, slug, ReportRequest(lang=lang), path, export=True))
    for slug in cards:
        path = f"/{lang}/cards/{slug}"
        yield (path, partial(pages.card_page, slug, ReportRequest(lang=lang), path, export=True))


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


def export_site(
    directory: Path,
    *,
    languages: Sequence[str] = LANGUAGES,
    limit: int | None = None,
    advance: Callable[[str], None] | None = None,
    total: Callable[[int], None] | None = None,
) -> ExportResult:
    """Write every page of `plan()` under `directory`; `advance(path)` after each page."""
    todo = plan(languages, limit)
    if total:
        total(len(todo))
    for path, render in todo:
        target = directory / page_file(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render(), encoding="utf-8")
        if advance:
            advance(path)
    return ExportResult(len(todo), copy_static(directory), directory)
