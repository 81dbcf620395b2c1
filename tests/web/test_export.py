"""`tpscalc export-site`: every page in every language, with relative links that resolve."""
from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from tpscalc.cli.main import app

LINK = re.compile(r'(?:href|src|action)="([^"#?]+)')


def run(*args: str):

    return CliRunner().invoke(app, ["export-site", *args])


def test_full_export_links_resolve(tmp_path: Path) -> None:
    result = run(str(tmp_path))
    assert result.exit_code == 0, result.output
    files = list(tmp_path.rglob("*.html"))
    assert len(files) == 1 + 3 * (3 + 3 + 5)  # root + per language: indexes, credits, models, cards
    for f in files:
        for link in LINK.findall(f.read_text(encoding="utf-8")):
            if link.startswith(("http://", "https://")):
                continue
            assert not link.startswith("/"), f"absolute link {link} in {f}"
            assert (f.parent / link).resolve().is_file(), f"{link} in {f} points nowhere"
    assert (tmp_path / "static" / "style.css").is_file()
    assert '<html lang="nl">' in (tmp_path / "nl" / "models" / "starcoder-2-15b.html").read_text()


def test_limited_export(tmp_path: Path) -> None:
    result = run(str(tmp_path), "--limit", "1", "--lang", "es")
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in (tmp_path / "es" / "models").iterdir())
    assert names == ["starcoder-2-15b.html"]
    assert not (tmp_path / "en").exists()


def test_export_rejects_unknown_language(tmp_path: Path) -> None:
    result = run(str(tmp_path), "--lang", "fr")
    assert result.exit_code == 2 and "unknown language" in result.output


def test_a_non_empty_folder_is_refused_without_force(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "mine.txt").write_text("keep me")
    result = run(str(site), "--limit", "1", "--lang", "en")
    assert result.exit_code == 2
    assert "not empty" in result.output and "--force" in result.output
    assert [p.name for p in site.iterdir()] == ["mine.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]  # no temporary folder left


def test_force_replaces_the_content_and_leaves_no_temporary_folder(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "old.html").write_text("old")
    result = run(str(site), "--limit", "1", "--lang", "en", "--force")
    assert result.exit_code == 0, result.output
    assert not (site / "old.html").exists()
    assert (site / "en" / "models" / "starcoder-2-15b.html").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_an_interrupted_export_leaves_no_half_site(tmp_path: Path, monkeypatch) -> None:
    from tpscalc.web import export

    real = export.write_unit
    written: list[object] = []

    def interrupted(directory: Path, unit: export.Unit, languages: object) -> int:
        if written:
            raise KeyboardInterrupt
        written.append(unit)
        return real(directory, unit, languages)  # type: ignore[arg-type]

    monkeypatch.setattr(export, "write_unit", interrupted)
    site = tmp_path / "site"
    result = run(str(site), "--jobs", "1")
    assert result.exit_code != 0
    assert list(tmp_path.iterdir()) == []


def test_processes_write_the_same_site_as_one(tmp_path: Path, monkeypatch) -> None:
    from tpscalc.web import export

    monkeypatch.setattr(export, "MIN_UNITS_FOR_PROCESSES", 1)
    assert run(str(tmp_path / "one"), "--jobs", "1").exit_code == 0
    result = run(str(tmp_path / "two"), "--jobs", "2")
    assert result.exit_code == 0, result.output
    one = {p.relative_to(tmp_path / "one"): p.read_bytes() for p in (tmp_path / "one").rglob("*")
           if p.is_file()}
    two = {p.relative_to(tmp_path / "two"): p.read_bytes() for p in (tmp_path / "two").rglob("*")
           if p.is_file()}
    assert one == two


def test_exported_pages_show_only_controls_that_work_there(tmp_path: Path) -> None:
    assert run(str(tmp_path), "--limit", "1").exit_code == 0
    for page in ("en/models/starcoder-2-15b.html", "es/cards", "nl/models", "en/cards"):
        path = tmp_path / (page if page.endswith(".html") else page + ".html")
        html = path.read_text(encoding="utf-8")
        form = html[html.index('<form id="controls"'):html.index("</form>")]
        assert 'data-static="1"' in form and " hidden>" in form  # shown by the script only
        assert 'name="search"' in form
        for server_only in ('name="context"', 'name="backend"', 'name="organization"',
                            'type="submit"'):
            assert server_only not in form, (page, server_only)


def test_an_exported_page_holds_the_first_rows_and_its_data_file_every_row(
        tmp_path: Path, many_cards: int) -> None:
    """A model page's table shows one page of rows; its data file (shared by the languages)
    holds every row of the report, in order, as the served report has them."""
    from tpscalc.report.request import ReportRequest
    from tpscalc.web import reports, static_data
    from tpscalc.web.pages import STATIC_ROWS

    result = run(str(tmp_path), "--lang", "en", "--lang", "nl")
    assert result.exit_code == 0, result.output
    page = (tmp_path / "en" / "models" / "starcoder-2-15b.html").read_text(encoding="utf-8")
    table = page[page.index('id="results-table"'):page.index("</table>")]
    assert table.count("<tr class=\"fit-") == STATIC_ROWS < many_cards
    assert 'data-rows="../../static/data/models/starcoder-2-15b.js"' in table
    assert "static-more" in page  # the no-JavaScript note: the first rows of how many
    data = tmp_path / "static" / "data" / "models" / "starcoder-2-15b.js"
    key, rows = static_data.read_script(data.read_text(encoding="utf-8"))
    report = reports.model_report("starcoder-2-15b", ReportRequest())
    assert key == "rows" and rows["kind"] == "model"
    assert len(rows["rows"]) == len(report["rows"]) == many_cards
    _, dictionary = static_data.read_script(
        (tmp_path / "static" / "data" / "nl.js").read_text(encoding="utf-8"))
    slugs = [dictionary["cards"][r[0]][0] for r in rows["rows"]]
    assert slugs == [r["slug"] for r in report["rows"]]
    assert [r[1][0] for r in rows["rows"]] == [
        static_data.neutral_number(r["decode"]["tokens_per_s"],
                                   static_data.tps_digits(r["decode"]["tokens_per_s"]))
        for r in report["rows"]]
    assert dictionary["separators"] == [".", ","]  # Dutch marks for the script to put in


def test_a_card_page_data_file_holds_every_model(tmp_path: Path) -> None:
    from tpscalc.report.request import ReportRequest
    from tpscalc.web import reports, static_data

    assert run(str(tmp_path), "--lang", "es").exit_code == 0
    text = (tmp_path / "static" / "data" / "cards" / "geforce-rtx-4090.js").read_text("utf-8")
    _, rows = static_data.read_script(text)
    _, dictionary = static_data.read_script(
        (tmp_path / "static" / "data" / "es.js").read_text(encoding="utf-8"))
    report = reports.card_report("geforce-rtx-4090", ReportRequest())
    assert [dictionary["models"][r[0]][0] for r in rows["rows"]] == [r["slug"] for r in
                                                                     report["rows"]]


def test_no_progress_bar_when_not_a_terminal(tmp_path: Path) -> None:
    """The bar goes to stderr and only to a terminal: piped, stdout has the one summary line."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "tpscalc", "export-site", str(tmp_path / "s"),
                           "--limit", "1", "--lang", "en", "--jobs", "1"],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert proc.stdout.startswith("wrote ") and proc.stdout.count("\n") == 1


def test_an_empty_folder_name_is_refused(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("", "  "):
        result = run(name, "--limit", "1", "--lang", "en")
        assert result.exit_code == 2 and "give a folder" in result.output
    assert list(tmp_path.iterdir()) == []


def test_of_two_moves_into_one_empty_folder_only_the_first_lands(tmp_path: Path) -> None:
    from tpscalc.web.export import _move_into_place

    site = tmp_path / "site"
    site.mkdir()
    works = [tmp_path / f"work{i}" for i in range(2)]
    for i, work in enumerate(works):
        work.mkdir()
        (work / "index.html").write_text(f"site {i}")
    _move_into_place(works[0], site, replace=False)
    try:
        _move_into_place(works[1], site, replace=False)
    except FileExistsError as exc:
        assert "not empty" in str(exc)
    else:
        raise AssertionError("the second export replaced the first")
    assert (site / "index.html").read_text() == "site 0"


def test_concurrent_exports_into_one_empty_folder_one_succeeds(tmp_path: Path) -> None:
    import threading

    from tpscalc.web.export import export_site

    site = tmp_path / "site"
    site.mkdir()
    outcomes: list[str] = []

    def export() -> None:
        try:
            export_site(site, languages=("en",), limit=1, jobs=1)
            outcomes.append("ok")
        except FileExistsError:
            outcomes.append("refused")

    threads = [threading.Thread(target=export) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert sorted(outcomes) == ["ok", "refused", "refused"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]  # no temporary folder left


def test_a_primed_unit_writes_the_pages_the_site_renders(tmp_path: Path) -> None:
    """The export renders its pages from the reports it primed (the API's data, never encoded):
    each page is the one the site renders from a freshly built report, and nothing primed is
    left behind once the unit is written."""
    from tpscalc.i18n import LANGUAGES
    from tpscalc.report.request import ReportRequest
    from tpscalc.web import export, pages, reports
    from tpscalc.web.render import page_file

    for kind, slug in (("model", "starcoder-2-15b"), ("card", "geforce-rtx-4090")):
        reports.clear_cache()
        export.write_unit(tmp_path, (kind, slug), LANGUAGES)
        assert not reports._PRIMED
        page = pages.model_page if kind == "model" else pages.card_page
        for lang in LANGUAGES:
            path = f"/{lang}/{kind}s/{slug}"
            reports.clear_cache()
            fresh = page(slug, ReportRequest(lang=lang), path, export=True)
            assert (tmp_path / page_file(path)).read_text(encoding="utf-8") == fresh, path
