"""An interactive session's own host, ``s-<id>.<apps domain>``: its app and nothing else.

Each session is served from an origin of its own, so the app's pages (the user's own code,
a notebook's output, an extension) are another origin than the portal's: they cannot read a
portal page, its CSRF token or its API, and the portal's host-only cookies never reach them.
Requests are told apart by their Host header before any portal route is matched; an app's
host answers only the ticket exchange and its session's own paths, every other path is 404.
"""

from __future__ import annotations

import logging
import re
import uuid

from sqlalchemy.exc import SQLAlchemyError
from starlette.datastructures import Headers
from starlette.requests import HTTPConnection, Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route, Router, WebSocketRoute
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket

from app.db import unit_of_work
from app.i18n import _
from app.interactive import tickets, viewers
from app.interactive.sessions import BASE_PATH
from app.interactive.upstream import UpstreamUnavailable
from app.models.base import utc_now
from app.web import app_credentials as credentials
from app.web import desktop
from app.web.app_ended import ended_page, is_page_load
from app.web.app_origins import EXCHANGE_PATH, session_hex_of, split_host
from app.web.app_proxy import (
    METHODS,
    POLICY_VIOLATION,
    SAFE_METHODS,
    Reach,
    is_cross_site,
    reach_of,
)
from app.web.app_relay import proxy_http, proxy_websocket
from app.web.auth import ANON_CSRF_COOKIE, SESSION_COOKIE, is_secure_request
from app.web.settings import web_settings_of
from app.wiring import services_of

# Never forwarded to an app, and never set by one: named like the portal's own credentials
# (with or without a __Host-/__Secure- prefix) or like a session host's.
CREDENTIAL_COOKIES = frozenset({SESSION_COOKIE, ANON_CSRF_COOKIE, credentials.APP_COOKIE})
# Printable ASCII only: a Location carries nothing the browser could read as a header break.
LOCAL_TARGET = re.compile(r"^/[\x21-\x7e]*$")
logger = logging.getLogger(__name__)


def _session_hex(connection: HTTPConnection) -> str:
    return str(connection.scope.get("state", {}).get("app_session_hex", ""))


def _base_path(session_hex: str) -> str:
    return BASE_PATH.format(uuid=uuid.UUID(session_hex))


def _secret(connection: HTTPConnection) -> str:
    return str(services_of(connection.app).settings.secret_key.get_secret_value())


def _refusal(status: int, message: str) -> Response:
    return PlainTextResponse(message, status_code=status)


def _grant(connection: HTTPConnection, session_hex: str) -> credentials.Grant | None:
    """The host's own cookie, read under either name: it is bound to this host's session, so
    one tossed from a sibling host opens nothing here."""
    for name in (credentials.SECURE_APP_COOKIE, credentials.APP_COOKIE):
        grant = credentials.grant_of_cookie(
            _secret(connection), connection.cookies.get(name), session_hex
        )
        if grant is not None:
            return grant
    return None


def _spender(connection: HTTPConnection) -> credentials.Spend:
    sessionmaker = services_of(connection.app).sessionmaker

    async def spend(nonce: str) -> bool:
        return await tickets.spend(sessionmaker, nonce, utc_now(), credentials.SPENT_TICKET_KEPT)

    return spend


async def exchange(request: Request) -> Response:
    """Redeems a ticket from the portal's Connect for this host's cookie, then opens the app."""
    session_hex = _session_hex(request)
    if not session_hex:
        return _refusal(404, _("No such session."))
    ticket = request.query_params.get("ticket", "")
    grant = await credentials.redeem_ticket(
        _secret(request), ticket, session_hex, _spender(request)
    )
    if grant is None:
        return _refusal(403, _("This link has expired. Open the session from Interactive apps."))
    target = request.query_params.get("next", "")
    base = _base_path(session_hex)
    if not (target.startswith(base) and LOCAL_TARGET.match(target)):
        target = base
    response = RedirectResponse(target, status_code=303)
    secure = is_secure_request(request)
    response.set_cookie(
        credentials.app_cookie_name(secure),
        credentials.cookie_value(_secret(request), grant),
        httponly=True,
        samesite="lax",
        secure=secure,
        path="/",
    )
    home = request.query_params.get("home", "")
    if credentials.home_of(_secret(request), home):
        response.set_cookie(
            credentials.HOME_COOKIE, home, httponly=True, samesite="lax", secure=secure, path="/"
        )
    # The ticket is spent, but it need not be told to anyone the app links to.
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


def _is_own_path(connection: HTTPConnection) -> bool:
    session_hex = _session_hex(connection)
    return bool(session_hex) and connection.path_params["session_uuid"].hex == session_hex


async def _reach(connection: HTTPConnection, grant: credentials.Grant) -> Reach | None:
    services = services_of(connection.app)
    async with services.sessionmaker() as session:
        return await reach_of(
            session, grant.user_id, grant.session_hex, services.apps, services.schedulers
        )


async def _recent_reach(request: Request, grant: credentials.Grant) -> Reach | None:
    """``_reach``, answered from the last second's for an owner's app's own requests (scripts,
    data, polls; ADR 0033): asking the database who the cookie's user is, whether the session
    runs and whether its end was asked for is a third of a relayed request. A page load always
    asks, so it shows an ended session's page; a viewer's request too, so a revoked link is
    honoured at once."""
    if is_page_load(request):
        return await _reach(request, grant)
    recent = services_of(request.app).reaches
    key = (grant.user_id, grant.session_hex)
    reach = await recent.get(key, lambda: _reach(request, grant))
    if not isinstance(reach, Reach) or reach.role != "owner":
        recent.forget(key)
    return reach if isinstance(reach, Reach) else None


async def proxy(request: Request) -> Response:
    if not _is_own_path(request):
        return _refusal(404, _("No such session."))
    if request.method not in SAFE_METHODS and is_cross_site(request):
        return _refusal(403, _("Another site cannot act in your session."))
    grant = _grant(request, _session_hex(request))
    if grant is None:
        return _refusal(403, _("Open this session from Interactive apps in the portal."))
    reach = await _recent_reach(request, grant)
    if reach is None:
        ended = None
        if is_page_load(request):
            ended = await ended_page(request, grant.session_hex, grant.user_id)
        return ended or _refusal(404, _("This session is not running."))
    if reach.definition.kind == "vnc":
        session_uuid = str(uuid.UUID(grant.session_hex))
        return desktop.page(request, reach, session_uuid, request.path_params["path"])
    services = services_of(request.app)
    try:
        return await proxy_http(request, reach.upstream, services.http, CREDENTIAL_COOKIES)
    except UpstreamUnavailable:
        # Perhaps it has just ended: the next request asks the database again.
        services.reaches.forget((grant.user_id, grant.session_hex))
        return _refusal(502, _("The app's server is not answering."))


async def proxy_socket(websocket: WebSocket) -> None:
    grant = _grant(websocket, _session_hex(websocket)) if _is_own_path(websocket) else None
    reach = None
    if grant is not None and not is_cross_site(websocket):
        reach = await _reach(websocket, grant)
    if reach is None or grant is None:
        await websocket.close(code=POLICY_VIOLATION)
        return
    if reach.definition.kind != "vnc":
        await proxy_websocket(websocket, reach.upstream, CREDENTIAL_COOKIES)
        return
    if websocket.path_params["path"] != desktop.STREAM_PATH:
        await websocket.close(code=POLICY_VIOLATION)
        return
    allowed_grant = grant

    async def still_allowed() -> bool:
        return await _reach(websocket, allowed_grant) is not None

    await desktop.bridge(websocket, reach, still_allowed, _noter(websocket, grant.session_hex))


def _noter(connection: HTTPConnection, session_hex: str) -> desktop.Seen:
    """Notes on the session's row, in its own short transaction, that someone has it open."""
    sessionmaker = services_of(connection.app).sessionmaker
    session_uuid = str(uuid.UUID(session_hex))

    async def seen() -> None:
        try:
            async with unit_of_work(sessionmaker) as session:
                await viewers.note_viewed(session, session_uuid, utc_now())
        except SQLAlchemyError:
            # The stream matters more than the idle clock, which the next note puts right.
            logger.warning("could not note that session %s is open", session_uuid, exc_info=True)

    return seen


async def not_found(scope: Scope, receive: Receive, send: Send) -> None:
    """Every other path: a plain 404 (a WebSocket is refused), never a portal page."""
    if scope["type"] == "websocket":
        await WebSocket(scope, receive, send).close(code=POLICY_VIOLATION)
        return
    await _refusal(404, _("Not found."))(scope, receive, send)


PROXIED = "/apps/sessions/{session_uuid:uuid}/{path:path}"
APP_HOST = Router(
    routes=[
        Route(EXCHANGE_PATH, exchange, methods=["GET"]),
        Route(PROXIED, proxy, methods=METHODS),
        WebSocketRoute(PROXIED, proxy_socket),
    ],
    default=not_found,
)


class AppHostMiddleware:
    """Sends every request whose Host is under the apps domain to its session's host, never
    to a portal route; the portal's own host is left as it was."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            domain = web_settings_of(scope["app"]).apps_domain
            name, _ = split_host(Headers(scope=scope).get("host", ""))
            session_hex = session_hex_of(name, domain)
            if session_hex is not None:
                # The same scope, not a copy: the router writes the chosen endpoint into it,
                # and the outer layers read that endpoint's body rules (app.request_bodies).
                scope["state"] = {**scope.get("state", {}), "app_session_hex": session_hex}
                await APP_HOST(scope, receive, send)
                return
        await self.app(scope, receive, send)
