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
