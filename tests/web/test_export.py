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
