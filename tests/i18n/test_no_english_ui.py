"""No English user-interface text on the Spanish and Dutch pages, nor in `tpscalc card/model/
estimate --lang es|nl`.

"English UI text" is every phrase of three words or more that the English catalog holds: each
msgid (templates, web, report and cli code) cut at its placeholders, and the English literals of
the report/web/cli code that are not msgids at all (a question written in a tuple and passed to
gettext later is such a string: extraction misses it, so it was never translated). The visible
text of each page (tags, scripts and styles removed, entities decoded, catalog names blanked)
must contain none of them verbatim. Served through HTTP on the real catalog, so the offload,
vision, non-generative and rig cases are the ones people see.
"""
from __future__ import annotations

import ast
import html
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest
from typer.testing import CliRunner

import tpscalc
from tpscalc.catalog import store
from tpscalc.web.translations import extract

PLACEHOLDER = re.compile(r"%\([a-z_]+\)[sd]|\{[a-z_]*\}|%[sd]")
WORD = re.compile(r"[A-Za-z][A-Za-z_'’-]*")  # num_ctx is one word
# Phrases that are the same in every language; each with its reason.
ALLOWED = {
    "Data on AI Models",  # the title of Epoch AI's dataset, quoted as published
    "tok/s",  # the unit llama.cpp prints, kept in every language
}
LANGS = ("es", "nl")
FIT_OFFLOAD = {"es": "Descarga parcial a la RAM", "nl": "Offload naar RAM"}


def _fragments(text: str) -> Iterator[str]:
    for part in PLACEHOLDER.split(text):
        part = " ".join(part.split()).strip(" .,:;·—()")
        if len(WORD.findall(part)) >= 3 and part not in ALLOWED:
            yield part


def _source_literals() -> set[str]:
    """Sentence-like string literals of the code that words what people see: report, web, cli,
    and the error messages of estimate and catalog (docstrings excluded)."""
    root = Path(tpscalc.__file__).parent
    out: set[str] = set()
    for sub in ("report", "web", "cli", "estimate", "catalog"):  # the last two: error messages
        for path in (root / sub).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            docs = {id(n.body[0].value) for n in ast.walk(tree)
                    if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef,
                                      ast.AsyncFunctionDef))
                    and n.body and isinstance(n.body[0], ast.Expr)
                    and isinstance(n.body[0].value, ast.Constant)}
            for node in ast.walk(tree):
                if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                        and id(node) not in docs and " " in node.value):
                    out.add(node.value)
    return out


@cache
def english_phrases() -> tuple[str, ...]:
    """Every English UI phrase of three words or more, longest first."""
    texts: set[str] = set()
    for msg in extract():
        if msg.id:
            texts.update(msg.id if isinstance(msg.id, tuple) else (msg.id,))
    assert len(texts) > 200  # extraction really ran
    texts |= _source_literals()
    phrases = {f for t in texts for f in _fragments(t)}
    return tuple(sorted(phrases, key=len, reverse=True))


@cache
def _names() -> tuple[str, ...]:
    """Catalog names and organizations: data, shown as published."""
    names: set[str] = set()
    for m in store.models():
        names.add(m.name)
        names.update(m.organization)
        names.update(str(v) for v in m.record.values() if isinstance(v, str))
    names.update(c.name for c in store.cards())
    return tuple(sorted((n for n in names if len(n) >= 3), key=len, reverse=True))


def visible_text(page: str) -> str:
    """What a reader sees: no tags, scripts or styles; entities decoded; names blanked."""
    page = re.sub(r"(?is)<(script|style)\b.*?</\1>", " ", page)
    page = re.sub(r"(?s)<[^>]+>", "\n", page)
    text = html.unescape(page)
    for name in _names():
        if name in text:  # whole words only: a short record value must not cut a word
            text = re.sub(rf"(?<!\w){re.escape(name)}(?!\w)", " ", text)
    return " ".join(text.split())


def english_in(text: str) -> list[str]:
    """The English phrases in `text`, matched as whole words ("tokens per second" is not in
    Dutch "tokens per seconde")."""
    flat = " ".join(text.split())
    return [p for p in english_phrases()
            if p in flat and re.search(rf"(?<!\w){re.escape(p)}(?!\w)", flat)]


def test_the_check_finds_english() -> None:
    assert english_in(visible_text("<p>Memory needed against context length</p>"))
    assert not english_in(visible_text("<p>Memoria necesaria según la longitud del contexto</p>"))


@pytest.fixture(scope="module")
def client() -> Iterator[object]:
    from fastapi.testclient import TestClient

    from tpscalc.web.app import create_app

    with TestClient(create_app(), raise_server_exceptions=False) as c:
        yield c


def _slug(predicate: object) -> str:
    found = next(m for m in store.models() if predicate(m))  # type: ignore[operator]
    return found.slug


def pages() -> list[tuple[str, int]]:
    """(path without language, expected status) of every kind of page."""
    vision = _slug(lambda m: m.parameters_vision and m.generates)
    silent = _slug(lambda m: not m.generates)
    apple = next(c.slug for c in store.cards() if c.vendor == "Apple")
    return [
        ("models", 200),
        ("cards", 200),
        ("credits", 200),
        ("models/llama-3-1-8b", 200),
        (f"models/{vision}", 200),
        (f"models/{silent}", 200),
        # The site's pages take no rig (gpus, ram): these answer as single-card pages; the CLI
        # runs below show the offload and CPU rows.
        ("models/llama-3-1-70b?ram=64&all=1", 200),
        ("models/llama-3-1-70b?gpus=2&ram=64", 200),
        ("cards/geforce-rtx-4090", 200),
        ("cards/geforce-rtx-4090?gpus=2&ram=64&all=1", 200),
        (f"cards/{apple}?context=131072", 200),
        ("models/no-such-model-at-all", 404),
        ("cards/geforce-rtx-4090?context=abc", 400),
        ("models/llama-3-1-8b?context=99999999", 400),
        ("nowhere", 404),
    ]


@pytest.mark.parametrize("lang", LANGS)
def test_pages_show_no_english(client: object, lang: str) -> None:
    found: dict[str, list[str]] = {}
    for path, status in pages():
        response = client.get(f"/{lang}/{path}")  # type: ignore[attr-defined]
        assert response.status_code == status, path
        english = english_in(visible_text(response.text))
        if english:
            found[path] = english[:4]
    assert not found, f"English on /{lang}/ pages: {found}"


ISO_TIMESTAMP = re.compile(r"\b\d{4}-\d{2}-\d{2}(T\d{2}:\d{2})?\b")
ENGLISH_DECIMAL = re.compile(r"(?<![\w.,])\d+\.\d{1,2}[BMT]\b")  # "41.9B": es/nl write "41,9B"


@pytest.mark.parametrize("lang", LANGS)
def test_pages_write_dates_and_numbers_the_local_way(client: object, lang: str) -> None:
    for path, _status in pages()[:11]:
        text = visible_text(client.get(f"/{lang}/{path}").text)  # type: ignore[attr-defined]
        assert not ISO_TIMESTAMP.search(text), (path, ISO_TIMESTAMP.search(text))
        assert not ENGLISH_DECIMAL.search(text), (path, ENGLISH_DECIMAL.search(text))


def cli_runs() -> list[list[str]]:
    return [
        ["card", "RTX 4090"],
        ["card", "RTX 4090", "--gpus", "2", "--ram", "64", "--all"],
        ["model", "Llama 3.1 8B"],
        ["model", "Llama 3.1 70B", "--ram", "64", "--all"],
        ["model", _slug(lambda m: not m.generates)],
        ["estimate", "--model", "Llama 3.1 70B", "--card", "RTX 4090", "--ram", "64"],
        ["estimate", "--model", "Llama 3.1 8B", "--card", "RTX 4090"],
    ]


@pytest.fixture()
def fewer_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real catalog thinned to every 20th card and model plus the ones the runs name (a rig
    report places every model on every card: 45 s a language on the whole catalog)."""
    from tpscalc.catalog import get_card, get_model

    named_cards = {get_card("RTX 4090").slug}
    named_models = {get_model(n).slug for n in ("Llama 3.1 8B", "Llama 3.1 70B")}
    named_models.add(_slug(lambda m: not m.generates))
    named_models.add(_slug(lambda m: m.parameters_vision and m.generates))
    cards = tuple(c for i, c in enumerate(store.cards())
                  if i % 20 == 0 or c.slug in named_cards or c.vendor == "Apple" and i % 5 == 0)
    models = tuple(m for i, m in enumerate(store.models()) if i % 20 == 0 or m.slug in named_models)
    monkeypatch.setattr(store, "cards", lambda: cards)
    monkeypatch.setattr(store, "models", lambda: models)


@pytest.mark.usefixtures("fewer_rows")
@pytest.mark.parametrize("lang", LANGS)
def test_cli_prints_no_english(lang: str) -> None:
    from tpscalc.cli.main import app

    runner = CliRunner()
    found: dict[str, list[str]] = {}
    shown_rig_rows = False
    for args in cli_runs():
        result = runner.invoke(app, [*args, "--lang", lang], env={"COLUMNS": "200"})
        assert result.exit_code == 0, (args, result.output[-500:])
        text = visible_text(result.stdout)
        shown_rig_rows = shown_rig_rows or FIT_OFFLOAD[lang] in text
        assert not ENGLISH_DECIMAL.search(text), (args, ENGLISH_DECIMAL.search(text))
        english = english_in(text)
        if english:
            found[" ".join(args)] = english[:4]
    assert not found, f"English in --lang {lang}: {found}"
    assert shown_rig_rows  # the offload rows really were checked
