"""Relays a signed-in owner's browser to their interactive app's server on a compute node.

The app serves HTTP and WebSocket under its session's path prefix, so paths and queries pass
untouched; the caller has chosen the session and checked the browser may reach it. The app's
token replaces the browser's credentials, the portal's cookies are removed both ways (none is
forwarded to the app, none the app sets reaches the browser, and the app's own lose any
Domain), Host and Origin name the app's server (Jupyter compares them), hop-by-hop and
X-Forwarded-* headers are dropped, and a Location naming the app's server becomes a path.

Because every request carries the token, Jupyter skips its own Origin and XSRF checks: the
caller must refuse cross-site requests itself (Origin on WebSocket handshakes above all).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import httpx
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketDisconnect
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake
from websockets.typing import Subprotocol

from app.interactive.upstream import CONNECT_TIMEOUT, TIMEOUT, Upstream, UpstreamUnavailable
from app.scheduler.errors import SchedulerError

# Jupyter sends a cell's whole output as one message, tens of MB at times. The bound is far
# above that yet keeps one app from filling the portal's memory (over it: 1009 to both sides).
MAX_MESSAGE_BYTES = 256 * 1024 * 1024
UNAVAILABLE = "The app's server is not answering."
LOST = "The app's server closed the connection unexpectedly."
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization",
                        "proxy-connection", "te", "trailer", "trailers", "transfer-encoding",
                        "upgrade"})  # fmt: skip
# Replaced rather than forwarded. Expect: the portal's server has already answered any
# "100-continue" to the browser.
REPLACED = frozenset({"host", "authorization", "cookie", "forwarded", "expect"})
# The WebSocket client writes these itself for its own handshake with the app.
HANDSHAKE = frozenset({"host", "sec-websocket-key", "sec-websocket-version",
                       "sec-websocket-extensions", "sec-websocket-protocol"})  # fmt: skip


def _connection_tokens(headers: Iterable[tuple[str, str]]) -> frozenset[str]:
    """Hop-by-hop headers, with those a Connection header names (RFC 9110, 7.6.1)."""
    listed = (value.split(",") for name, value in headers if name == "connection")
    return HOP_BY_HOP | {token.strip().lower() for tokens in listed for token in tokens}


def is_named_like(name: str, names: frozenset[str]) -> bool:
    """Whether a cookie is one of ``names``, in any case and with or without a prefix that
    only changes how browsers store it (``__Host-``, ``__Secure-``)."""
    bare = name.strip().lower()
    for prefix in ("__host-", "__secure-"):
        bare = bare.removeprefix(prefix)
    return bare in {n.lower() for n in names}


def _kept_cookies(values: Iterable[str], drop_cookies: frozenset[str]) -> str:
    """The Cookie header without the portal's cookies; others, such as ``_xsrf``, stay."""
    pairs = (pair.strip() for value in values for pair in value.split(";"))
    return "; ".join(p for p in pairs if p and not is_named_like(p.split("=", 1)[0], drop_cookies))


def scoped_set_cookie(value: str, drop_cookies: frozenset[str]) -> str | None:
    """An app's Set-Cookie as the browser may have it: None for a cookie named like one of
    the portal's, and no Domain attribute, so that it stays on the host that served it."""
    pair, *attributes = value.split(";")
    if "=" not in pair or is_named_like(pair.split("=", 1)[0], drop_cookies):
        return None
    kept = [a for a in attributes if a.split("=", 1)[0].strip().lower() != "domain"]
    return ";".join([pair, *kept])


def _request_headers(
    incoming: list[tuple[str, str]], upstream: Upstream, drop_cookies: frozenset[str]
) -> list[tuple[str, str]]:
    """The browser's headers as the app must see them (names lower-case, as ASGI gives)."""
    auth = upstream.auth_header.lower()
    dropped = _connection_tokens(incoming) | REPLACED | {auth}
    headers = [
        (name, f"http://{upstream.authority}" if name == "origin" else value)
        for name, value in incoming
        if name not in dropped and not name.startswith("x-forwarded-")
    ]
    cookies = _kept_cookies((value for name, value in incoming if name == "cookie"), drop_cookies)
    if auth == "cookie":
        # An app that takes its secret as a cookie gets it beside the browser's own.
        cookies = f"{cookies}; {upstream.auth_value}" if cookies else upstream.auth_value
    else:
        headers.append((auth, upstream.auth_value))
    if cookies:
        headers.append(("cookie", cookies))
    headers.append(("host", upstream.authority))
    return headers


def _local_location(location: str, upstream: Upstream) -> str:
    """A Location naming the app's server, as a path the browser resolves against the portal."""
    parts = urlsplit(location)
    if parts.scheme.lower() != "http" or parts.netloc.lower() != upstream.authority.lower():
        return location
    # One leading slash: "//name/..." would send the browser to another site.
    path = "/" + parts.path.lstrip("/")
    return urlunsplit(("", "", path, parts.query, parts.fragment))


def _response_header(
    name: str, value: str, upstream: Upstream, drop_cookies: frozenset[str]
) -> str | None:
    if name == "location":
        return _local_location(value, upstream)
    if name == "set-cookie":
        return scoped_set_cookie(value, drop_cookies)
    return value


def _response_headers(
    response: httpx.Response, upstream: Upstream, drop_cookies: frozenset[str]
) -> list[tuple[bytes, bytes]]:
    """The app's headers for the browser; the body is relayed as the app encoded it, so
    Content-Length and Content-Encoding stay. Set-Cookie is scoped (``scoped_set_cookie``)."""
    incoming = [
        (name.decode("latin-1").lower(), value.decode("latin-1"))
        for name, value in response.headers.raw
    ]
    dropped = _connection_tokens(incoming)
    headers = []
    for name, value in incoming:
        kept = None if name in dropped else _response_header(name, value, upstream, drop_cookies)
        if kept is not None:
            headers.append((name.encode("latin-1"), kept.encode("latin-1")))
    return headers


def _target(scope: Scope) -> str:
    """The path and query exactly as the browser sent them: re-encoding a decoded path would
    turn an escaped slash (``a%2Fb``, a file name in Jupyter) into a real one."""
    raw_path = scope.get("raw_path")
    path = raw_path.decode("latin-1") if raw_path else quote(scope["path"])
    query = scope.get("query_string", b"").decode("latin-1")
    return f"{path}?{query}" if query else path


class _RelayedResponse(StreamingResponse):
    """The app's response, streamed as it arrives; closed even if the browser goes away."""

    def __init__(
        self, response: httpx.Response, upstream: Upstream, drop_cookies: frozenset[str]
    ) -> None:
        super().__init__(response.aiter_raw(), status_code=response.status_code)
        self.raw_headers = _response_headers(response, upstream, drop_cookies)
        self._upstream_response = response

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            await self._upstream_response.aclose()


async def proxy_http(
    request: Request, upstream: Upstream, client: httpx.AsyncClient, drop_cookies: frozenset[str]
) -> Response:
    """Forwards ``request`` to the app and returns its response, streamed both ways.

    The returned response holds the app's connection open until it has been sent; return it
    to the framework. Raises UpstreamUnavailable when the app's server cannot be reached.
    """
    headers = _request_headers(request.headers.items(), upstream, drop_cookies)
    # A request has a body only when it says so; others must not become chunked uploads.
    has_body = "content-length" in request.headers or "transfer-encoding" in request.headers
    outgoing = httpx.Request(
        request.method,
        httpx.URL(f"http://{upstream.authority}{_target(request.scope)}"),
        # Bytes, because browsers send Latin-1 in header values and httpx encodes str as ASCII.
        headers=[(name.encode("latin-1"), value.encode("latin-1")) for name, value in headers],
        content=request.stream() if has_body else None,
        extensions={"timeout": TIMEOUT.as_dict(), **upstream.extensions()},
    )
    try:
        # auth=None and a hand-built request: nothing of the client's own (auth, cookies,
        # default headers) is added, and a redirect goes back to the browser.
        response = await client.send(outgoing, stream=True, auth=None, follow_redirects=False)
    except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
        raise UpstreamUnavailable(UNAVAILABLE) from exc
    return _RelayedResponse(response, upstream, drop_cookies)


def _sendable(code: int, otherwise: int) -> int:
    """``code`` if a close frame may carry it; else 1000 for 1005 (a close without a code)
    and ``otherwise`` for 1006 and 1015 (a connection lost, reported but never sent)."""
    if (1000 <= code <= 1014 and code not in (1004, 1005, 1006)) or 3000 <= code <= 4999:
        return code
    return 1000 if code == 1005 else otherwise


async def _open_upstream(
    websocket: WebSocket, upstream: Upstream, drop_cookies: frozenset[str]
) -> ClientConnection | None:
    """The WebSocket to the app, or None if its server cannot be reached or refuses."""
    headers = _request_headers(websocket.headers.items(), upstream, drop_cookies)
    offered = websocket.scope.get("subprotocols")
    try:
        return await connect(
            f"ws://{upstream.authority}{_target(websocket.scope)}",
            additional_headers=[pair for pair in headers if pair[0] not in HANDSHAKE],
            # None, not [], when the browser offered none: [] sends an empty header.
            subprotocols=[Subprotocol(p) for p in offered] if offered else None,
            user_agent_header=None,  # the browser's own is among the headers
            compression=None,  # the cluster's network is fast; the portal's CPU is shared
            open_timeout=CONNECT_TIMEOUT,
            max_size=MAX_MESSAGE_BYTES,
            # Directly, never through the site's outbound proxy; an explicit host and port
            # (or the tunnel's socket) also stop websockets from following a redirect away.
            proxy=None,
            **await connection_to(upstream),
        )
    except (OSError, TimeoutError, InvalidHandshake, ValueError, SchedulerError):
        # ValueError: redirected away; SchedulerError: the login node refused the tunnel.
        return None


async def connection_to(upstream: Upstream) -> dict[str, Any]:
    """The app's address, or a connection through the login node when there is no route."""
    if upstream.opener is None:
        return {"host": upstream.host, "port": upstream.port}
    return {
        "sock": await asyncio.wait_for(
            upstream.opener(upstream.host, upstream.port), CONNECT_TIMEOUT
        )
    }


async def _close_browser(websocket: WebSocket, code: int, reason: str) -> None:
    # The browser may have gone already; there is nobody left to tell.
    with contextlib.suppress(WebSocketDisconnect, RuntimeError):
        await websocket.close(code, reason)


async def _browser_to_app(websocket: WebSocket, connection: ClientConnection) -> None:
    """Ends only when the browser leaves; when the app closes, _app_to_browser tells it."""
    while True:
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            code = _sendable(int(message.get("code") or 1005), otherwise=1001)  # going away
            await connection.close(code, str(message.get("reason") or ""))
            return
        data = message.get("bytes") if message.get("text") is None else message["text"]
        if data is not None:
            # Failing here would end the relay before the browser hears the app's close code.
            with contextlib.suppress(ConnectionClosed):
                await connection.send(data)


async def _app_to_browser(websocket: WebSocket, connection: ClientConnection) -> None:
    try:
        while True:
            data = await connection.recv()
            if isinstance(data, str):
                await websocket.send_text(data)
            else:
                await websocket.send_bytes(data)
    except ConnectionClosed as closed:
        # No close frame (rcvd) from the app: its server died or the network failed.
        code, reason = (closed.rcvd.code, closed.rcvd.reason) if closed.rcvd else (1006, LOST)
        await _close_browser(websocket, _sendable(code, otherwise=1011), reason)


PUMPS = (_browser_to_app, _app_to_browser)


async def _relay(websocket: WebSocket, connection: ClientConnection) -> None:
    """Relays frames both ways until either side closes, then the other is told."""
    pumps = [asyncio.create_task(pump(websocket, connection)) for pump in PUMPS]
    try:
        done, _ = await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in pumps:
            task.cancel()
        await asyncio.gather(*pumps, return_exceptions=True)
    for task in done:
        # The browser leaving mid-send is ordinary; anything else is a fault to see.
        with contextlib.suppress(WebSocketDisconnect):
            task.result()


async def proxy_websocket(
    websocket: WebSocket, upstream: Upstream, drop_cookies: frozenset[str]
) -> None:
    """Connects the browser's WebSocket (not yet accepted) to the app's and relays frames
    both ways until either side closes; the close code and reason reach the other side. If
    the app's server cannot be reached or refuses, the browser's socket closes with 1011.
    """
    connection = await _open_upstream(websocket, upstream, drop_cookies)
    if connection is None:
        # Accepted only so that the code and reason reach the page: a refused handshake is
        # a bare 1006 there. The browser insists on one of the subprotocols it offered.
        offered = websocket.scope.get("subprotocols") or [None]
        with contextlib.suppress(WebSocketDisconnect, OSError):
            await websocket.accept(subprotocol=offered[0])
        await _close_browser(websocket, 1011, UNAVAILABLE)
        return
    try:
        with contextlib.suppress(WebSocketDisconnect):  # the browser left; the app is told below
            await websocket.accept(subprotocol=connection.subprotocol)
            await _relay(websocket, connection)
    finally:
        await connection.close()
