"""Password and API-token hashing, and the security headers every response carries (sent by
app/web/http_guards.py)."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

# A recognisable marker lets secret scanners and users spot leaked portal tokens.
TOKEN_MARKER = "hpc_"  # noqa: S105
TOKEN_PREFIX_LENGTH = 12
_password_hasher = PasswordHasher()

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'"
)


def security_headers(form_targets: tuple[str, ...] = ()) -> dict[str, str]:
    """SECURITY_HEADERS, with forms also allowed to lead to ``form_targets`` (origins).

    Sign-out is a form whose answer redirects to the identity provider's logout (ADR 0028);
    browsers hold a form's redirects to ``form-action`` too.
    """
    if not form_targets:
        return SECURITY_HEADERS
    policy = CONTENT_SECURITY_POLICY.replace(
        "form-action 'self'", " ".join(("form-action 'self'", *form_targets))
    )
    return {**SECURITY_HEADERS, "Content-Security-Policy": policy}


SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}


def hash_password(password: str) -> str:
    return _password_hasher.hash(password)


def is_password_correct(password_hash: str | None, password: str) -> bool:
    if not password_hash:
        return False
    try:
        return _password_hasher.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


@dataclass(frozen=True, slots=True)
class NewToken:
    """A freshly minted API token: ``secret`` is shown once, only ``hash`` is stored."""

    secret: str
    prefix: str
    hash: str


def hash_token(secret: str) -> str:
    # Tokens carry 256 random bits, so a fast hash is enough and lets lookups use an index.
    return hashlib.sha256(secret.encode()).hexdigest()


def mint_token() -> NewToken:
    secret = TOKEN_MARKER + secrets.token_urlsafe(32)
    return NewToken(secret=secret, prefix=secret[:TOKEN_PREFIX_LENGTH], hash=hash_token(secret))


def is_token_hash_match(secret: str, stored_hash: str) -> bool:
    return hmac.compare_digest(hash_token(secret), stored_hash)
