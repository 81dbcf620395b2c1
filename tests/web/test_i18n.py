"""Every message is translated in es and nl.

That is, the messages of the templates, the web code and the report builder.
"""
from __future__ import annotations

import pytest

from tpscalc.i18n import messages, translator
from tpscalc.web.translations import extract


@pytest.fixture(scope="module")
def msgids() -> list[str]:
    ids = [m.id[0] if isinstance(m.id, tuple) else m.id for m in extract() if m.id]
    assert len(ids) > 150  # templates + web + report: extraction really ran
    return ids


@pytest.mark.parametrize("lang", ["es", "nl"])
def test_every_msgid_is_translated(msgids: list[str], lang: str) -> None:
    missing = [m for m in msgids if m not in messages(lang)]
    assert not missing, (f"{len(missing)} messages lack a {lang} translation; run "
                         f"`python -m tpscalc.web.translations` and translate: {missing[:5]}")


@pytest.mark.parametrize("lang", ["es", "nl"])
def test_placeholders_survive_translation(msgids: list[str], lang: str) -> None:
    import re

    pattern = re.compile(r"\{[a-z_]+\}|%\([a-z_]+\)s")
    table = messages(lang)
    for msgid in msgids:
        found = table.get(msgid)
        text = found if isinstance(found, str) else (found or ("",))[0]
        if text:
            assert sorted(pattern.findall(text)) == sorted(pattern.findall(msgid)), msgid


def test_translations_are_used() -> None:
    assert translator("es").gettext("Graphics cards") != "Graphics cards"
    assert translator("nl").gettext("Graphics cards") != "Graphics cards"


@pytest.mark.parametrize("lang", ["es", "nl"])
def test_every_plural_form_is_filled(lang: str) -> None:
    from tpscalc.web.translations import read

    catalog = read(lang)
    for msg in catalog:
        if isinstance(msg.id, tuple):
            assert len(msg.string) == catalog.num_plurals and all(msg.string), msg.id


def test_plural_forms_follow_the_language_rule() -> None:
    es = translator("es")
    assert es.ngettext("%(num)s card", "%(num)s cards", 1) == "%(num)s tarjeta"
    # Spanish: one, many (1,000,000), other; the third form was empty and showed blank
    for n in (0, 2, 5, 1_000_000):
        assert es.ngettext("%(num)s card", "%(num)s cards", n) == "%(num)s tarjetas"
    assert translator("nl").ngettext("%(num)s card", "%(num)s cards", 3) == "%(num)s kaarten"


@pytest.mark.parametrize("lang", ["es", "nl"])
def test_every_fit_label_is_translated(lang: str) -> None:
    from typing import get_args

    from tpscalc.estimate.types import FitLabel
    from tpscalc.report.common import FIT_LABELS

    assert set(FIT_LABELS) == set(get_args(FitLabel))
    for word in FIT_LABELS.values():
        assert translator(lang).gettext(word) != word
