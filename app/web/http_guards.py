"""Guards every HTTP response and request passes: the security headers (app/security.py),
HSTS and no-store caching on the way out, and the body size limit on the way in."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.datastructures import Headers, MutableHeaders
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.security import security_headers

HSTS = "max-age=31536000; includeSubDomains"
# Pages show one person's jobs, tokens and logs: after sign-out, Back must not show them
# from the browser's cache. Static files (versioned names) stay cacheable.
NO_STORE = "no-store"


class SecurityHeadersMiddleware:
    """Adds SECURITY_HEADERS to every HTTP response that does not set them itself, HSTS
    over HTTPS, and ``Cache-Control: no-store`` to everything but static files."""

    def __init__(self, app: ASGIApp, form_targets: tuple[str, ...] = ()) -> None:
        self.app = app
        self.headers = security_headers(form_targets)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        is_static = str(scope.get("path", "")).startswith("/static/")
        is_https = scope.get("scheme") == "https"

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in self.headers.items():
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
    """Checks a request before its body is read: who sends it (``before_body``, which raises
    the refusal) and how large it may be (``max_bytes``, 413 over it).

    Both are asked when the body is first read, not when the request arrives: by then the
    router has chosen the endpoint (``scope["endpoint"]``), so they are that route's rules
    (``app.request_bodies``), and a body nobody reads is never pulled in at all. A declared
    Content-Length over the limit is refused before the first byte is read; a chunked body
    is counted and refused where it passes the limit.
    """

    def __init__(
        self,
        app: ASGIApp,
        max_bytes: Callable[[Scope], int],
        before_body: Callable[[Scope], Awaitable[None]] | None = None,
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.before_body = before_body

    async def _limit(self, scope: Scope, declared: str) -> int:
        if self.before_body is not None:
            await self.before_body(scope)
        limit = self.max_bytes(scope)
        if declared.isdigit() and int(declared) > limit:
            raise HTTPException(413, _too_large_detail(limit))
        return limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        declared = headers.get("content-length", "")
        if declared in ("", "0") and "chunked" not in headers.get("transfer-encoding", ""):
            # No body (a GET): later calls to receive only wait for the client to leave,
            # as a streamed response does, and must not be refused.
            await self.app(scope, receive, send)
            return
        limit: int | None = None
        received = 0

        async def counted() -> Message:
            nonlocal limit, received
            if limit is None:
                limit = await self._limit(scope, declared)
            message = await receive()
            received += len(message.get("body", b""))
            if received > limit:
                # Raised where the route reads its body, so the usual error pages answer.
                raise HTTPException(413, _too_large_detail(limit))
            return message

        await self.app(scope, counted, send)


def _too_large_detail(limit: int) -> str:
    return f"The request body is larger than {limit} bytes."
