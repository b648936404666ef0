"""What a delivery attempt says: stored in English, shown in the reader's language.

The dispatcher runs outside any request and its log is read later, in a language it cannot
know; so each message is stored in English with its values filled in (``english``), and
``shown`` recognises a stored text as one of these messages and says it again in the
current language. Anything else (a receiver's or a mail server's own answer) is shown as it is.
"""

from __future__ import annotations

import re
from functools import lru_cache

from babel.support import LazyProxy

from app import i18n
from app.i18n import lazy_gettext

NO_MAIL_SERVER = lazy_gettext("This portal has no mail server configured.")
NO_ADDRESS = lazy_gettext("Your account has no e-mail address.")
MAIL_REFUSED = lazy_gettext("The mail server refused: %(answer)s")
ADDRESS_REFUSED = lazy_gettext("The mail server refused the address: %(answer)s")
MAIL_UNREACHABLE = lazy_gettext("Cannot reach the mail server: %(reason)s")
RECEIVER_REFUSED = lazy_gettext("The receiver answered %(status)s.")
UNSENDABLE = lazy_gettext("This notification cannot be sent: %(reason)s")
# Why an address may not receive webhooks (checked again before each delivery).
TOO_LONG = lazy_gettext("Use an address of at most %(limit)s characters.")
NOT_HTTP = lazy_gettext("Use an http:// or https:// address.")
HAS_PASSWORD = lazy_gettext(
    "Put no user name or password in the address; the signature proves who sent the request."
)
BAD_PORT = lazy_gettext("The port in this address is not valid.")
NO_HOST = lazy_gettext("The address has no host name.")
BAD_HOST_NAME = lazy_gettext(
    "%(host)s is not a valid host name (letters, digits and hyphens in each part)."
)
UNRESOLVED = lazy_gettext("The host name %(host)s cannot be resolved.")
NOT_PUBLIC = lazy_gettext(
    "%(host)s is a private, loopback or link-local address; webhooks go only to public addresses."
)
MESSAGES = (
    NO_MAIL_SERVER,
    NO_ADDRESS,
    MAIL_REFUSED,
    ADDRESS_REFUSED,
    MAIL_UNREACHABLE,
    RECEIVER_REFUSED,
    UNSENDABLE,
    TOO_LONG,
    NOT_HTTP,
    HAS_PASSWORD,
    BAD_PORT,
    NO_HOST,
    BAD_HOST_NAME,
    UNRESOLVED,
    NOT_PUBLIC,
)
_PLACEHOLDER = re.compile(r"%\((\w+)\)s")


def _message_id(message: LazyProxy) -> str:
    with i18n.use_locale(i18n.DEFAULT_LOCALE):
        return str(message)


def english(message: LazyProxy, **values: object) -> str:
    """``message`` as it is stored: in English, its values filled in."""
    text = _message_id(message)
    return text % values if values else text


@lru_cache(maxsize=1)
def _patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    found = []
    for message in MESSAGES:
        text = _message_id(message)
        parts = _PLACEHOLDER.split(text)
        # Literal text and placeholder names alternate; each value is matched as any text.
        pattern = "".join(
            re.escape(part) if index % 2 == 0 else f"(?P<{part}>.*?)"
            for index, part in enumerate(parts)
        )
        found.append((text, re.compile(pattern, re.DOTALL)))
    return tuple(found)


def shown(text: str | None) -> str | None:
    """A stored ``text`` in the current language when it is one of ``MESSAGES``."""
    if not text:
        return text
    for message_id, pattern in _patterns():
        match = pattern.fullmatch(text)
        if match is not None:
            return i18n.gettext(message_id, **match.groupdict())
    return text
