"""Which address a request comes from, when reverse proxies may stand in between.

``X-Forwarded-For`` (and ``X-Forwarded-Proto``) are believed only when the connecting peer
is one of ``PORTAL_TRUSTED_PROXIES`` (none by default); the client is then the right-most address in
the header that is not itself a trusted proxy. Anyone else's header is ignored, so it can
forge neither the per-address sign-in limit, nor an audit event's address, nor a token's
last-used address. The server must not rewrite the peer itself: the launchers run uvicorn
with ``--no-proxy-headers``, because uvicorn otherwise believes the header from 127.0.0.1.
"""

from __future__ import annotations

from starlette.requests import HTTPConnection, Request
from starlette.types import ASGIApp, Receive, Scope, Send

from app.web.settings import WebSettings, get_web_settings, web_settings_of

# What a request is attributed to when the server already replaced the peer with a
# header's value: the true peer is lost, and the header's value is the attacker's choice.
UNVERIFIED = "unverified"


def forwarded_client(peer: str, header: str, settings: WebSettings) -> str:
    hops = [part.strip() for part in header.split(",") if part.strip()]
    if not settings.is_proxy(peer):
        # A peer equal to the header's last hop means a server in front of the app (uvicorn
        # without --no-proxy-headers) believed the header; that value cannot be trusted.
        return UNVERIFIED if hops and hops[-1] == peer else peer
    for hop in reversed(hops):
        if not settings.is_proxy(hop):
            return hop[:64]
    return peer


class ForwardedForMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        client = scope.get("client")
        if scope["type"] in ("http", "websocket") and client:
            scope = _forwarded_scheme(scope, client[0])
            header = _header(scope, b"x-forwarded-for")
            if header:
                settings = web_settings_of(scope["app"])
                host = forwarded_client(client[0], header, settings)
                state = {
                    **scope.get("state", {}),
                    "is_forwarded_unverified": host == UNVERIFIED,
                    # The proxy itself, for the proxy sign-in header (ADR 0004).
                    "peer": client[0],
                }
                if not settings.is_proxy(client[0]):
                    # Came through something we do not trust: never an operations request.
                    state["is_forwarded_unverified"] = True
                scope = {**scope, "client": (host, client[1]), "state": state}
        await self.app(scope, receive, send)


def _forwarded_scheme(scope: Scope, peer: str) -> Scope:
    """A trusted proxy that terminated TLS says so; the app then sets Secure cookies and HSTS."""
    proto = _header(scope, b"x-forwarded-proto").split(",")[-1].strip().lower()
    if proto not in ("http", "https"):
        return scope
    if not web_settings_of(scope["app"]).is_proxy(peer):
        return scope
    # A WebSocket behind TLS is wss: its Origin check compares the page's https origin.
    if scope["type"] == "websocket":
        proto = {"http": "ws", "https": "wss"}[proto]
    return {**scope, "scheme": proto}


def _header(scope: Scope, name: bytes) -> str:
    headers: list[tuple[bytes, bytes]] = scope.get("headers") or []
    values = [value.decode("latin-1") for key, value in headers if key == name]
    return ",".join(values)


def is_operations_request(request: Request) -> bool:
    """A monitoring host reading /metrics or the detailed /healthz, by its resolved address.

    A request that carries X-Forwarded-For from a peer that is not a trusted proxy never
    qualifies: a proxy the portal was not told about would make every visitor look local.
    """
    if getattr(request.state, "is_forwarded_unverified", False):
        return False
    address = request.client.host if request.client else None
    return get_web_settings(request).is_operations_address(address)


def peer_address(request: HTTPConnection) -> str:
    """The address that opened the connection, before X-Forwarded-For was applied."""
    peer = getattr(request.state, "peer", None)
    if isinstance(peer, str):
        return peer
    return request.client.host if request.client else ""
