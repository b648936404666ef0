"""The interface's languages: one gettext catalogue per language, chosen per request.

Every user-facing string is an English message id marked with ``_`` (Python and templates
alike, ``%(name)s`` placeholders), extracted by Babel into ``app/locales/messages.pot`` and
translated in ``app/locales/<lang>/LC_MESSAGES/messages.po``. The ``.po`` files are compiled
in memory when first used, so there is no build step and no compiled file to keep in step.

The language of a request is the signed-in user's setting, else the browser's
``Accept-Language``, else English; it lives in a context variable, so code below the
surfaces translates without being handed a request.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from gettext import NullTranslations
from pathlib import Path
from typing import Any

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.numbers import format_decimal
from babel.support import LazyProxy, Translations

LOCALES_DIR = Path(__file__).resolve().parent / "locales"
DEFAULT_LOCALE = "en"
# Each language the interface speaks, in its own words (for the language setting).
LANGUAGES: dict[str, str] = {"en": "English", "fr": "Français"}

_current: ContextVar[str] = ContextVar("portal_locale", default=DEFAULT_LOCALE)


@lru_cache(maxsize=len(LANGUAGES))
def translations(locale: str) -> NullTranslations:
    """The compiled catalogue of ``locale``; English is the message ids themselves."""
    path = LOCALES_DIR / locale / "LC_MESSAGES" / "messages.po"
    if locale == DEFAULT_LOCALE or not path.is_file():
        return NullTranslations()
    with path.open("rb") as source:
        catalog = read_po(source, locale=locale)
    compiled = io.BytesIO()
    # Fuzzy entries are guesses nobody checked: English is shown instead of a wrong French.
    write_mo(compiled, catalog, use_fuzzy=False)
    compiled.seek(0)
    return Translations(compiled)


def current_locale() -> str:
    return _current.get()


def set_locale(locale: str | None) -> None:
    """Make ``locale`` the language of the rest of this request (unknown ones are ignored)."""
    if locale in LANGUAGES:
        _current.set(locale)


@contextmanager
def use_locale(locale: str) -> Iterator[None]:
    """Speak ``locale`` inside the block (a poller's e-mail to one user, a test)."""
    token = _current.set(locale if locale in LANGUAGES else DEFAULT_LOCALE)
    try:
        yield
    finally:
        _current.reset(token)


def gettext(message: str, **params: Any) -> str:
    """``message`` in the current language, its ``%(name)s`` placeholders filled in."""
    text = translations(_current.get()).gettext(message)
    return text % params if params else text


def ngettext(singular: str, plural: str, count: int, **params: Any) -> str:
    text = translations(_current.get()).ngettext(singular, plural, count)
    return text % ({"num": count} | params)


def pgettext(context: str, message: str, **params: Any) -> str:
    """``message`` as meant in ``context``, where one English word has two French ones
    ("Home": the site's front page, or the user's home folder)."""
    text = translations(_current.get()).pgettext(context, message)
    return text % params if params else text


_ = gettext


def lazy_gettext(message: str, **params: Any) -> LazyProxy:
    """A message translated when it is shown, for module-level constants."""
    return LazyProxy(gettext, message, enable_cache=False, **params)


def _quality(part: str) -> tuple[str, float]:
    tag, _sep, rest = part.strip().partition(";")
    weight = 1.0
    for parameter in rest.split(";"):
        name, _eq, value = parameter.strip().partition("=")
        if name == "q":
            try:
                weight = float(value)
            except ValueError:
                weight = 0.0
    return tag.strip().lower(), weight


def negotiate(accept_language: str | None) -> str:
    """The best language we speak for an ``Accept-Language`` header (English if none fits)."""
    ranked = sorted(
        (_quality(part) for part in (accept_language or "").split(",")[:20] if part.strip()),
        key=lambda pair: -pair[1],
    )
    for tag, weight in ranked:
        primary = tag.split("-")[0]
        if weight > 0 and primary in LANGUAGES:
            return primary
    return DEFAULT_LOCALE


# Binary units as each language writes them (French: Kio, Mio, Gio…).
UNIT_WORDS: dict[str, LazyProxy] = {
    "B": lazy_gettext("B"),
    "KiB": lazy_gettext("KiB"),
    "MiB": lazy_gettext("MiB"),
    "GiB": lazy_gettext("GiB"),
    "TiB": lazy_gettext("TiB"),
    "PiB": lazy_gettext("PiB"),
    "EiB": lazy_gettext("EiB"),
}


def format_number(value: float, pattern: str = "#,##0.#") -> str:
    """``value`` with the reader's separators (``12,034.5``, « 12 034,5 »)."""
    return format_decimal(value, format=pattern, locale=_current.get())


def format_units(value: float, unit: str, pattern: str = "#,##0.#") -> str:
    """A figure and its unit, joined as the language joins them (a narrow no-break space in
    French): ``3.4 KiB``, « 3,4 Kio »."""
    word = str(UNIT_WORDS[unit]) if unit in UNIT_WORDS else unit
    return gettext("%(number)s %(unit)s", number=format_number(value, pattern), unit=word)


def format_share(percent: float, pattern: str = "#,##0.0") -> str:
    """A percentage already multiplied by 100: ``25.0 %``, « 25,0 % »."""
    return gettext("%(number)s %%", number=format_number(percent, pattern))
