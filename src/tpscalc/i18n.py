"""Translations (Babel .po catalogs read directly, no compile step) and locale-aware formatting."""
from __future__ import annotations

import os
from collections.abc import Callable
from functools import cache, lru_cache

# Babel (and gettext, decimal, datetime) load on first use: the CLI's English JSON report
# formats no locale-specific text.

LANGUAGES: tuple[str, ...] = ("en", "es", "nl")
DEFAULT_LANGUAGE = "en"
# The .po catalogs, read as plain files (importlib.resources costs ~10 ms of imports).
LOCALES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "web", "locales")


class UnknownLanguageError(ValueError):
    """A language code we have no catalog for."""


def check_language(lang: str) -> str:
    """`lang` if we speak it, else UnknownLanguageError listing the languages we do."""
    if lang not in LANGUAGES:
        raise UnknownLanguageError(f"unknown language {lang!r}; use one of {', '.join(LANGUAGES)}")
    return lang


@cache
def messages(lang: str) -> dict[str, str | tuple[str, ...]]:
    """msgid → translation for `lang` (empty for English, whose msgids are the text)."""
    check_language(lang)
    if lang == DEFAULT_LANGUAGE:  # its .po file only repeats the msgids (a test checks): the
        return {}                 # CLI's English report then loads no Babel for it
    path = os.path.join(LOCALES_DIR, lang, "LC_MESSAGES", "messages.po")
    if not os.path.isfile(path):
        return {}
    from babel.messages.pofile import read_po

    with open(path, "rb") as fh:
        catalog = read_po(fh, locale=lang)
    out: dict[str, str | tuple[str, ...]] = {}
    for msg in catalog:
        if not msg.id or not msg.string or msg.fuzzy:
            continue
        key = msg.id if isinstance(msg.id, str) else msg.id[0]
        out[key] = msg.string if isinstance(msg.string, str) else tuple(msg.string)
    return out


class Translator:
    """gettext/ngettext for one language, the interface Jinja2's i18n extension expects."""

    def __init__(self, lang: str) -> None:
        self.lang = check_language(lang)
        self._messages = messages(lang)

    def gettext(self, message: str) -> str:
        """The translation of `message`, or `message` itself."""
        found = self._messages.get(message)
        return found if isinstance(found, str) else message

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        """The translation for count `n`: the form the language's Plural-Forms rule picks (Spanish
        has three: one, many (a multiple of a million), other)."""
        found = self._messages.get(singular)
        if isinstance(found, tuple):
            return found[min(plural_index(self.lang, n), len(found) - 1)]
        return singular if n == 1 else plural


@cache
def _plural_rule(lang: str) -> Callable[[int], int]:
    from gettext import c2py

    from babel.messages.plurals import get_plural

    return c2py(get_plural(lang).plural_expr)


def plural_index(lang: str, n: int) -> int:
    """Which msgstr[i] of a plural entry `lang` uses for count `n` (its Plural-Forms rule)."""
    return int(_plural_rule(lang)(n))


@cache
def translator(lang: str) -> Translator:
    """The cached Translator for `lang`."""
    return Translator(lang)


@cache
def _separators(lang: str) -> dict[int, str]:
    """str.translate table from Python's "," and "." to the locale's group and decimal marks."""
    if lang == DEFAULT_LANGUAGE:  # English's marks are Python's own (a test checks with Babel)
        return {ord(","): ",", ord("."): "."}
    from babel import Locale

    symbols = Locale.parse(lang).number_symbols["latn"]
    return {ord(","): symbols["group"], ord("."): symbols["decimal"]}


def separators(lang: str) -> tuple[str, str]:
    """The locale's (group, decimal) marks: ("," ".") en, ("." ",") es and nl."""
    table = _separators(lang)
    return table[ord(",")], table[ord(".")]


def neutral_number(value: float, digits: int = 0) -> str:
    """`value` with `digits` decimals, "," grouping and "." decimal mark: format_number's text
    before the locale's marks replace them (a static page's script does that step)."""
    # Same text as babel's format_decimal with pattern "#,##0.0…" (half-even on the decimal
    # repr), ~10x faster: a model page formats a few thousand numbers.
    text = _rounded_repr(value, digits)
    if text is None:
        from decimal import Decimal  # ~1 ms of imports: only for what _rounded_repr leaves

        return f"{Decimal(str(value)):,.{digits}f}"
    whole, dot, frac = text.partition(".")
    return f"{int(whole):,}{dot}{frac}"


def _rounded_repr(value: float, digits: int) -> str | None:
    """`value`'s repr rounded half-even to `digits` decimals, as Decimal(repr) rounds it
    ("2.25" → "2.2", "2.35" → "2.4" at one digit); None for a negative or exponent repr."""
    text = repr(value) if type(value) is float else str(value) if type(value) is int else ""
    if not text or not text[0].isdigit() or "e" in text or "n" in text:
        return None  # negative (-0.0 keeps its sign), 1e+16, inf, nan, a bool or other type
    whole, _, frac = text.partition(".")
    if len(frac) <= digits:
        return whole + ("." + frac.ljust(digits, "0") if digits else "")
    kept, next_digit, rest = whole + frac[:digits], frac[digits], frac[digits + 1:]
    up = next_digit > "5" or (next_digit == "5" and (rest.strip("0") != ""
                                                     or int(kept[-1]) % 2 == 1))
    number = str(int(kept) + 1 if up else int(kept)).rjust(digits + 1, "0")
    return number[:-digits] + "." + number[-digits:] if digits else number


def format_number(value: float, lang: str, digits: int = 0) -> str:
    """`value` with `digits` decimals in the locale's style ("8,000" en, "8.000" es/nl)."""
    return neutral_number(value, digits).translate(_separators(lang))


ENGLISH_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov",
                  "Dec")


# a page formats the same few hundred dates; Babel builds a Locale per call
@lru_cache(maxsize=4096)
def format_release(iso_date: str | None, precision: str, lang: str) -> str:
    """A release date as "Jan 2024" (month) or "2024" (year-only placeholders), localised."""
    if not iso_date:
        return "—"
    year, month, day = (int(p) for p in iso_date.split("-"))
    if precision == "year":
        return str(year)
    if lang == DEFAULT_LANGUAGE:  # CLDR's English "MMM y" without loading Babel's locale data
        return f"{ENGLISH_MONTHS[month - 1]} {year}"  # (a test checks every month with Babel)
    from datetime import date

    from babel.dates import format_date

    return format_date(date(year, month, day), format="MMM y", locale=lang)
