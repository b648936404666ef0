"""Password and API-token hashing, and the HTTP security headers sent on every response."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# A recognisable marker lets secret scanners and users spot leaked portal tokens.
TOKEN_MARKER = "hpc_"  # noqa: S105
TOKEN_PREFIX_LENGTH = 12
_password_hasher = PasswordHasher()

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'"
)
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


class SecurityHeadersMiddleware:
    """Adds SECURITY_HEADERS to every HTTP response that does not set them itself."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers.setdefault(name, value)
            await send(message)

        await self.app(scope, receive, send_with_headers)
