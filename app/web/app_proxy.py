"""/apps/sessions/{uuid}/… on the portal's host: Connect, which sends the owner to the
session's own host (app_host.py) with a one-time ticket; the app is never served here.

Only the signed-in owner of a running session gets a ticket, and for a desktop the users its
owner lets watch it (view-only); for anyone else the path does not exist. What both hosts
share (who may reach which session, the cross-site check) is here.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.requests import HTTPConnection

from app.deps import AppsDep, SessionDep, SettingsDep
from app.errors import NotFound
from app.i18n import _
from app.interactive.connection import opener_for, target_of
from app.interactive.definitions import AppDefinition
from app.interactive.sessions import ends_asked
from app.interactive.tunnelled import Opener
from app.interactive.upstream import Upstream
from app.interactive.viewers import Role, can_be_watched, session_by_uuid_for
from app.models.users import User
from app.scheduler.registry import Schedulers, UnknownCluster
from app.users import service as users
from app.users.actor import Actor
from app.vocabulary.job_states import JobStateName
from app.web import app_credentials as credentials
from app.web.app_origins import connect_url
from app.web.auth import CurrentUser

router = APIRouter(include_in_schema=False)
PROXIED = "/apps/sessions/{session_uuid:uuid}/{path:path}"
METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
# A WebSocket refused before it is accepted: the browser sees a failed handshake.
POLICY_VIOLATION = 1008
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def is_cross_site(connection: HTTPConnection) -> bool:
    """Whether a browser sent this from another origin (another site or a sibling host).

    The app trusts every proxied request (the portal adds its secret), so Jupyter's own
    Origin and XSRF checks no longer protect it: without this, a page elsewhere (another
    session's host included) could drive the owner's kernels through their cookie.
    """
    fetch_site = connection.headers.get("sec-fetch-site")
    if fetch_site is not None and fetch_site not in ("same-origin", "none"):
        return True
    origin = connection.headers.get("origin")
    if origin is None:
        return False
    scheme = {"ws": "http", "wss": "https"}.get(connection.url.scheme, connection.url.scheme)
    return origin.lower() != f"{scheme}://{connection.url.netloc}".lower()


@dataclass(frozen=True, slots=True)
class Reach:
    """Where a session listens, its app, and whether the user reaching it owns it or may
    only watch it (a desktop's view-only link)."""

    upstream: Upstream
    definition: AppDefinition
    role: Role
    # The session's own secret (a desktop's VNC password, which the portal presents itself).
    secret: str = field(repr=False)

    @property
    def view_only(self) -> bool:
        return self.role != "owner"


async def reach_for(
    session: AsyncSession,
    actor: Actor,
    session_uuid: str,
    definitions: Mapping[str, AppDefinition],
    schedulers: Schedulers | None = None,
) -> Reach:
    """Where the running session the actor owns, or may watch, listens; NotFound for anything
    else. With ``schedulers``, connections to it open as its cluster says (through the login
    node, as its owner)."""
    row, role = await session_by_uuid_for(session, actor.user_id, session_uuid)
    definition = definitions.get(row.app)
    if definition is None or (role == "viewer" and not can_be_watched(definition)):
        raise NotFound(_("No such session."))
    owner = actor if role == "owner" else await _owner_of(session, row.owner_user_id)
    opener = _opener(schedulers, owner, row.job.cluster)
    upstream = target_of(row, definition, opener)
    if upstream is None or row.job.state != JobStateName.RUNNING:
        raise NotFound(_("This session is not running."))
    if row.idle_ended_at is not None or await ends_asked(session, owner, [row]):
        # Its server is being stopped: the app would answer with errors of its own.
        raise NotFound(_("This session is not running."))
    return Reach(upstream, definition, role, row.secret or "")


async def upstream_for(
    session: AsyncSession,
    actor: Actor,
    session_uuid: str,
    definitions: Mapping[str, AppDefinition],
    schedulers: Schedulers | None = None,
) -> Upstream:
    """``reach_for``'s upstream."""
    return (await reach_for(session, actor, session_uuid, definitions, schedulers)).upstream


async def _owner_of(session: AsyncSession, user_id: int) -> Actor:
    user = await session.get(User, user_id)
    if user is None or not user.is_active:
        raise NotFound(_("No such session."))
    return await users.actor_for(session, user)


def _opener(schedulers: Schedulers | None, actor: Actor, cluster: str) -> Opener | None:
    username = actor.username_on(cluster)
    if schedulers is None or username is None:
        return None
    try:
        return opener_for(schedulers.get(cluster), username)
    except UnknownCluster:
        return None


async def reach_of(
    session: AsyncSession,
    user_id: int,
    session_hex: str,
    definitions: Mapping[str, AppDefinition],
    schedulers: Schedulers,
) -> Reach | None:
    """Where a session listens, if ``user_id`` (still active) owns or may watch it, and it runs."""
    user = await session.get(User, user_id)
    if user is None or not user.is_active:
        return None
    actor = await users.actor_for(session, user)
    session_uuid = str(uuid.UUID(session_hex))
    try:
        return await reach_for(session, actor, session_uuid, definitions, schedulers)
    except NotFound:
        return None


async def upstream_of(
    session: AsyncSession,
    user_id: int,
    session_hex: str,
    definitions: Mapping[str, AppDefinition],
    schedulers: Schedulers,
) -> Upstream | None:
    """``reach_of``'s upstream."""
    reach = await reach_of(session, user_id, session_hex, definitions, schedulers)
    return None if reach is None else reach.upstream


def _target(request: Request) -> str:
    """The path and query as the browser sent them, to open on the session's host."""
    path = request.scope.get("raw_path") or request.url.path.encode()
    query = request.url.query
    return path.decode("latin-1") + (f"?{query}" if query else "")


@router.get(PROXIED, name="app_proxy")
async def connect(
    request: Request,
    session: SessionDep,
    actor: CurrentUser,
    definitions: AppsDep,
    settings: SettingsDep,
    session_uuid: uuid.UUID,
    path: str,
) -> Response:
    await reach_for(session, actor, str(session_uuid), definitions)
    secret = settings.secret_key.get_secret_value()
    ticket = credentials.mint_ticket(secret, credentials.Grant(session_uuid.hex, actor.user_id))
    home = credentials.sign_home(secret, str(request.base_url).rstrip("/"))
    location = connect_url(request, session_uuid.hex, ticket, _target(request), home)
    response = RedirectResponse(location, status_code=303)
    response.headers["Referrer-Policy"] = "no-referrer"
    return response
