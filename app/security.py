"""Password and API-token hashing, and the HTTP security headers sent on every response."""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from starlette.datastructures import Headers, MutableHeaders
from starlette.exceptions import HTTPException
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


HSTS = "max-age=31536000; includeSubDomains"
# Pages show one person's jobs, tokens and logs: after sign-out, Back must not show them
# from the browser's cache. Static files (versioned names) stay cacheable.
NO_STORE = "no-store"


class SecurityHeadersMiddleware:
    """Adds SECURITY_HEADERS to every HTTP response that does not set them itself, HSTS
    over HTTPS, and ``Cache-Control: no-store`` to everything but static files."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        is_static = str(scope.get("path", "")).startswith("/static/")
        is_https = scope.get("scheme") == "https"

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers.setdefault(name, value)
                if is_https:
                    headers.setdefault("Strict-Transport-Security", HSTS)
                if not is_static:
                    headers.setdefault("Cache-Control", NO_STORE)
                    # The framework marks event streams "no-cache"; a log is kept no more
                    # than a page is.
                    if headers.get("content-type", "").startswith("text/event-stream"):
                        headers["Cache-Control"] = NO_STORE
            await send(message)

        await self.app(scope, receive, send_with_headers)


class BodyLimitMiddleware:
    """Refuses request bodies over ``max_bytes`` with 413 before they are parsed: by the
    declared Content-Length at once, and by counting for chunked bodies."""

    def __init__(self, app: ASGIApp, max_bytes: Callable[[Scope], int]) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.max_bytes(scope)
        declared = Headers(scope=scope).get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            await _too_large(send, limit)
            return
        received = 0

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > limit:
                # Raised where the route reads its body, so the usual error pages answer.
                raise HTTPException(413, _too_large_detail(limit))
            return message

        await self.app(scope, counted, send)


def _too_large_detail(limit: int) -> str:
    return f"The request body is larger than {limit} bytes."


async def _too_large(send: Send, limit: int) -> None:
    body = json.dumps({"error": "PayloadTooLarge", "detail": _too_large_detail(limit)}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 413, "headers": headers})
    await send({"type": "http.response.body", "body": body})
