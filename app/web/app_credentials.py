"""The credentials of an app's own host: a launch ticket, then a cookie for that host only.

The portal's session cookie is host-only, so it never reaches an app's host, and an app's
host never reads it. "Connect" on the portal mints a **ticket**: signed, naming one session
and its owner, valid for a minute and once. The app's host redeems it for a **cookie** of
its own (host-only, HttpOnly, SameSite=Lax, Secure over TLS) naming the same session and
owner; that cookie opens that one session and nothing else, and the portal ignores it.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta

from itsdangerous import BadSignature, TimestampSigner

TICKET_SECONDS = 60
# How long a spent ticket is remembered: past its own minute, with room for clock skew.
SPENT_TICKET_KEPT = timedelta(seconds=TICKET_SECONDS + 60)
# The portal's own session lifetime: a session's cookie never outlives a sign-in.
COOKIE_SECONDS = 12 * 3600
APP_COOKIE = "hpcportal_app"
# Over TLS the browser refuses a __Host- cookie that names a Domain or comes from elsewhere.
SECURE_APP_COOKIE = "__Host-hpcportal_app"


@dataclass(frozen=True, slots=True)
class Grant:
    """What a ticket or a cookie opens: one session (its uuid, as hex) for one user."""

    session_hex: str
    user_id: int

    def encode(self) -> str:
        return f"{self.session_hex}.{self.user_id}"


def _signer(secret_key: str, purpose: str) -> TimestampSigner:
    return TimestampSigner(secret_key, salt=f"hpc-portal.{purpose}")


def _grant_of(payload: str) -> tuple[Grant, str] | None:
    parts = payload.split(".")
    if len(parts) not in (2, 3) or not parts[1].isdigit():
        return None
    return Grant(parts[0], int(parts[1])), (parts[2] if len(parts) == 3 else "")


def _unsign(signer: TimestampSigner, value: str, max_age: int) -> tuple[Grant, str] | None:
    try:
        payload = signer.unsign(value, max_age=max_age).decode()
    except (BadSignature, UnicodeDecodeError):
        return None
    return _grant_of(payload)


# Answers whether a ticket's nonce is spent now for the first time on the whole site
# (``app.interactive.tickets.spend``): every web process must agree, so not a dict here.
Spend = Callable[[str], Awaitable[bool]]


def mint_ticket(secret_key: str, grant: Grant) -> str:
    nonce = secrets.token_urlsafe(18)
    return _signer(secret_key, "app-ticket").sign(f"{grant.encode()}.{nonce}").decode()


async def redeem_ticket(
    secret_key: str, ticket: str, session_hex: str, spend: Spend
) -> Grant | None:
    """The ticket's grant if it is genuine, fresh, for this session's host and unused."""
    found = _unsign(_signer(secret_key, "app-ticket"), ticket, TICKET_SECONDS)
    if found is None:
        return None
    grant, nonce = found
    if grant.session_hex != session_hex or not nonce:
        return None
    return grant if await spend(nonce) else None


def cookie_value(secret_key: str, grant: Grant) -> str:
    return _signer(secret_key, "app-cookie").sign(grant.encode()).decode()


def grant_of_cookie(secret_key: str, value: str | None, session_hex: str) -> Grant | None:
    """The grant a host's cookie holds, if genuine, within its lifetime and for this host."""
    if not value:
        return None
    found = _unsign(_signer(secret_key, "app-cookie"), value, COOKIE_SECONDS)
    if found is None or found[1] or found[0].session_hex != session_hex:
        return None
    return found[0]


def app_cookie_name(secure: bool) -> str:
    return SECURE_APP_COOKIE if secure else APP_COOKIE


# Where the portal itself is, told to a session's host at Connect (signed, so no page
# elsewhere can plant a link there): its "session ended" page links back to Relaunch.
HOME_COOKIE = "hpcportal_home"
HOME = re.compile(r"^https?://[A-Za-z0-9.\-\[\]:]{1,300}$")


def sign_home(secret_key: str, origin: str) -> str:
    return _signer(secret_key, "app-home").sign(origin).decode()


def home_of(secret_key: str, value: str | None) -> str | None:
    """The portal's origin a home value names, if genuine."""
    if not value:
        return None
    try:
        origin = _signer(secret_key, "app-home").unsign(value, max_age=COOKIE_SECONDS).decode()
    except (BadSignature, UnicodeDecodeError):
        return None
    return origin if HOME.match(origin) else None
