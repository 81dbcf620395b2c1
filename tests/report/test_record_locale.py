"""The full record in the page's language: counts, Yes/No, categories, dates and timestamps."""
from __future__ import annotations

import pytest

from tpscalc.i18n import translator
from tpscalc.report.record import as_text


@pytest.mark.parametrize(("value", "lang", "shown"), [
    (15_000_000_000, "es", "15.000.000.000"), (15_000_000_000, "nl", "15.000.000.000"),
    (15_000_000_000, "en", "15,000,000,000"), ("15000000000", "es", "15.000.000.000"),
    (True, "es", "Sí"), (False, "nl", "Nee"), (True, "en", "Yes"),
    (["Industry"], "es", "Industria"), ("Academia,Industry", "nl", "Academisch, Bedrijfsleven"),
    ("2025-11-28T11:53:44+00:00", "es", "28 nov 2025"), ("2024-02-29", "en", "Feb 29, 2024"),
    ("2024-07-23", "nl", "23 jul 2024"), ("Confident", "es", "Seguro"),
    ("2024", "es", "2024"), ("Some text", "es", "Some text"),
])
def test_record_values_read_the_local_way(value: object, lang: str, shown: str) -> None:
    assert as_text(value, lang, translator(lang).gettext) == shown
