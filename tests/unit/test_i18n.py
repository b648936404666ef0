"""The message catalogue: every marked message translated, placeholders kept, languages chosen."""

from __future__ import annotations

from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

from app import i18n

ROOT = Path(__file__).resolve().parents[2]
METHODS = [("**.py", "python"), ("**.html", "jinja2")]
KEYWORDS = {
    "_": None,
    "gettext": None,
    "ngettext": (1, 2),
    "pgettext": ((1, "c"), 2),
    "lazy_gettext": None,
    "N_": None,
}


def _marked_messages() -> dict[tuple[str, str | None], str]:
    """Each (message id, context) marked in app/ and templates/, with where it was found."""
    found: dict[tuple[str, str | None], str] = {}
    for folder in ("app", "templates"):
        extracted = extract_from_dir(ROOT / folder, METHODS, keywords=KEYWORDS)
        for filename, line, message, _comments, context in extracted:
            # A plural message is its singular id; the plural form is part of that entry.
            text = message[0] if isinstance(message, tuple) else message
            found.setdefault((text, context), f"{folder}/{filename}:{line}")
    return found


def _french() -> Catalog:
    with (i18n.LOCALES_DIR / "fr" / "LC_MESSAGES" / "messages.po").open("rb") as source:
        return read_po(source, locale="fr")


def test_every_marked_message_has_a_checked_french_translation() -> None:
    catalog = _french()
    missing = []
    for (text, context), where in sorted(_marked_messages().items(), key=lambda pair: pair[1]):
        entry = catalog.get(text, context=context)
        translated = (
            entry is not None
            and not entry.fuzzy
            and all(entry.string if isinstance(entry.string, tuple) else (entry.string,))
        )
        if not translated:
            missing.append(f"{where}: {text!r}")
    assert not missing, "untranslated (run scripts/i18n, then translate):\n" + "\n".join(missing)


def test_translations_keep_every_placeholder() -> None:
    problems = [
        f"{message.id!r}: {error}" for message, errors in _french().check() for error in errors
    ]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("fr-CA,fr;q=0.9,en;q=0.8", "fr"),
        ("en-GB,en;q=0.9,fr;q=0.8", "en"),
        ("de-DE,de;q=0.9,fr;q=0.5", "fr"),
        ("fr;q=0", "en"),
        ("*", "en"),
        ("", "en"),
        (None, "en"),
        ("fr;q=abc, en;q=0.1", "en"),
    ],
)
def test_the_browsers_language_is_used_when_we_speak_it(header: str | None, expected: str) -> None:
    assert i18n.negotiate(header) == expected


def test_messages_follow_the_current_language() -> None:
    message = "Language saved."
    with i18n.use_locale("fr"):
        french = i18n.gettext(message)
    assert french != message
    assert i18n.gettext(message) == message
    with i18n.use_locale("xx"):
        assert i18n.gettext(message) == message
