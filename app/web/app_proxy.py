"""/apps/sessions/{uuid}/…: the owner's browser to their session's app, HTTP and WebSocket.

Only the signed-in owner of a running session gets through; for anyone else the path does
not exist. The app's secret is added here and never reaches the browser. No transaction is
held while a response streams.
"""

from __future__ import annotations

from collections.abc import Mapping

from fastapi import APIRouter, Request, WebSocket
from fastapi.responses import Response
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.requests import HTTPConnection

from app.db import release_connection
from app.deps import SessionDep
from app.errors import BadGateway, Forbidden, NotFound
from app.i18n import _
from app.interactive.connection import target_of
from app.interactive.definitions import AppDefinition
from app.interactive.proxy import Upstream, UpstreamUnavailable, proxy_http, proxy_websocket
from app.interactive.sessions import own_session_by_uuid
from app.jobs import states
from app.users.actor import Actor
from app.web.auth import ANON_CSRF_COOKIE, SESSION_COOKIE, CurrentUser, connection_actor
from app.wiring import services_of

router = APIRouter(include_in_schema=False)
PROXIED = "/apps/sessions/{session_uuid}/{path:path}"
METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
# The app is the user's own code: it never sees the portal's cookies.
PORTAL_COOKIES = frozenset({SESSION_COOKIE, ANON_CSRF_COOKIE})
# A WebSocket refused before it is accepted: the browser sees a failed handshake.
POLICY_VIOLATION = 1008


SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def is_cross_site(connection: HTTPConnection) -> bool:
    """Whether a browser sent this from another origin (another site or a sibling subdomain).

    The app trusts every proxied request (the portal adds its secret), so Jupyter's own
    Origin and XSRF checks no longer protect it: without this, a page elsewhere could drive
    the owner's kernels through their portal cookie.
    """
    fetch_site = connection.headers.get("sec-fetch-site")
    if fetch_site is not None and fetch_site not in ("same-origin", "none"):
        return True
    origin = connection.headers.get("origin")
    if origin is None:
        return False
    scheme = {"ws": "http", "wss": "https"}.get(connection.url.scheme, connection.url.scheme)
    return origin.lower() != f"{scheme}://{connection.url.netloc}".lower()


async def upstream_for(
    session: AsyncSession,
    actor: Actor,
    session_uuid: str,
    definitions: Mapping[str, AppDefinition],
) -> Upstream:
    """Where the actor's own running session listens; NotFound for anything else."""
    row = await own_session_by_uuid(session, actor, session_uuid)
    definition = definitions.get(row.app)
    upstream = target_of(row, definition) if definition is not None else None
    if upstream is None or row.job.state != states.RUNNING:
        raise NotFound(_("This session is not running."))
    return upstream


@router.api_route(PROXIED, methods=METHODS, name="app_proxy")
async def proxy(
    request: Request, session: SessionDep, actor: CurrentUser, session_uuid: str, path: str
) -> Response:
    if request.method not in SAFE_METHODS and is_cross_site(request):
        raise Forbidden(_("Another site cannot act in your session."))
    services = services_of(request.app)
    upstream = await upstream_for(session, actor, session_uuid, services.apps)
    await release_connection(session)
    try:
        return await proxy_http(request, upstream, services.http, PORTAL_COOKIES)
    except UpstreamUnavailable as error:
        raise BadGateway(_("The app's server is not answering.")) from error


@router.websocket(PROXIED)
async def proxy_socket(websocket: WebSocket, session_uuid: str, path: str) -> None:
    services = services_of(websocket.app)
    if is_cross_site(websocket):
        await websocket.close(code=POLICY_VIOLATION)
        return
    async with services.sessionmaker() as session:
        actor = await connection_actor(websocket, session)
        try:
            upstream = (
                None
                if actor is None
                else await upstream_for(session, actor, session_uuid, services.apps)
            )
        except NotFound:
            upstream = None
    if upstream is None:
        await websocket.close(code=POLICY_VIOLATION)
        return
    await proxy_websocket(websocket, upstream, PORTAL_COOKIES)
