"""English takes no Babel look-up (the CLI's default report starts faster): that is only right
while English's .po file repeats its msgids and its number marks are Python's own."""
from __future__ import annotations

from babel import Locale
from babel.messages.pofile import read_po

from tpscalc.i18n import _separators, messages
from tpscalc.web.translations import po_path


def test_english_translations_are_the_msgids() -> None:
    with po_path("en").open("rb") as fh:
        catalog = read_po(fh, locale="en")
    for msg in catalog:
        if not msg.id:  # the header
            continue
        ids = msg.id if isinstance(msg.id, tuple) else (msg.id,)
        strings = msg.string if isinstance(msg.string, tuple) else (msg.string,)
        assert all(not s or s == i for s, i in zip(strings, ids, strict=False)), msg.id
    assert messages("en") == {}


def test_english_marks_are_babels() -> None:
    symbols = Locale.parse("en").number_symbols["latn"]
    assert _separators("en") == {ord(","): symbols["group"], ord("."): symbols["decimal"]}


def test_english_release_dates_are_babels() -> None:
    from datetime import date

    from babel.dates import format_date

    from tpscalc.i18n import format_release

    for month in range(1, 13):
        expected = format_date(date(2024, month, 1), format="MMM y", locale="en")
        assert format_release(f"2024-{month:02d}-01", "month", "en") == expected
