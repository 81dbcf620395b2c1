"""Extract every msgid (templates, web, report and cli sources) and merge it into the .po catalogs.

Run `python -m tpscalc.web.translations` after adding strings; then translate the empty entries.
"""
from __future__ import annotations

from importlib import resources
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.pofile import read_po, write_po

from tpscalc.i18n import LANGUAGES
from tpscalc.report.record import SECTIONS

# gettext/ngettext/_ (Babel's defaults) plus N_ (mark only) and report/faq.py's _q(summary, msgid).
KEYWORDS = {**DEFAULT_KEYWORDS, "N_": None, "_q": (2,)}
METHODS = [("**/templates/**.html", "jinja2"), ("**.py", "python")]
OPTIONS = {"**/templates/**.html": {"extensions": "jinja2.ext.i18n", "trimmed": "false"}}


def package_dir() -> Path:
    """The tpscalc package folder."""
    return Path(str(resources.files("tpscalc")))


def _dynamic_msgids() -> list[str]:
    """Messages the report builder translates from tables (record section titles and labels)."""
    out: list[str] = []
    for title, fields in SECTIONS:
        out.append(title)
        out.extend(label for _key, label in fields)
    return out


def _keep_directory(path: str) -> bool:
    # Babel skips folders starting with "_" by default, which would hide templates/_partials.
    name = Path(path).name
    return not name.startswith(".") and name != "__pycache__"


def extract() -> Catalog:
    """Every msgid of the web, report and cli packages."""
    catalog = Catalog(project="tpscalc", charset="utf-8")
    root = package_dir()
    for sub in ("web", "report", "cli"):
        folder = root / sub
        if not folder.is_dir():
            continue
        for filename, lineno, message, comments, _ctx in extract_from_dir(
                str(folder), METHODS, options_map=OPTIONS, keywords=KEYWORDS,
                directory_filter=_keep_directory):
            if not message or (isinstance(message, tuple) and not message[0]):
                continue
            catalog.add(message, locations=[(f"{sub}/{filename}", lineno)], auto_comments=comments)
    for msgid in _dynamic_msgids():
        if msgid not in catalog:
            catalog.add(msgid, locations=[("report/record.py", 0)])
    return catalog


def po_path(lang: str) -> Path:
    """The .po file of `lang`."""
    return package_dir() / "web" / "locales" / lang / "LC_MESSAGES" / "messages.po"


def read(lang: str) -> Catalog:
    """The current catalog of `lang` (empty when missing)."""
    path = po_path(lang)
    if not path.is_file():
        return Catalog(locale=lang)
    with path.open("rb") as fh:
        return read_po(fh, locale=lang)


def update(lang: str, template: Catalog) -> int:
    """Merge `template` into `lang`'s catalog, keeping translations; returns untranslated count."""
    old = read(lang)
    new = Catalog(locale=lang, project="tpscalc", charset="utf-8")
    missing = 0
    for msg in template:
        if not msg.id:
            continue
        prev = old.get(msg.id)
        string = prev.string if prev is not None else ("" if not msg.pluralizable else ("", ""))
        if lang == "en":
            string = msg.id if not msg.pluralizable else tuple(msg.id)
        missing += not (string if isinstance(string, str) else all(string or ()))
        new.add(msg.id, string, locations=msg.locations)
    po_path(lang).parent.mkdir(parents=True, exist_ok=True)
    with po_path(lang).open("wb") as fh:
        write_po(fh, new, width=100, omit_header=False, sort_output=True)
    return missing


def main() -> None:
    """Re-extract and merge into every language; print how many entries still need translating."""
    template = extract()
    for lang in LANGUAGES:
        print(f"{lang}: {len(template)} messages, {update(lang, template)} untranslated")


if __name__ == "__main__":
    main()
