"""Bearer-token authentication, scope checks and the shared services API routes need."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from starlette.exceptions import HTTPException

from app.audit.service import Origin, api_surface
from app.db import unit_of_work
from app.deps import SessionmakerDep
from app.errors import Forbidden, NotFound, Unauthorized
from app.models.users import User
from app.scheduler.base import SchedulerAdapter
from app.scheduler.registry import Schedulers, UnknownCluster
from app.tokens import service as tokens
from app.tokens.scopes import ADMIN, READ, SUBMIT
from app.users.actor import Actor
from app.users.service import actor_for
from app.wiring import services_of

bearer_scheme = HTTPBearer(
    auto_error=False,
    bearerFormat="hpc_…",
    description="A personal access token created under Settings → API tokens.",
)
CHALLENGE = {"WWW-Authenticate": 'Bearer realm="hpc-portal"'}


@dataclass(frozen=True, slots=True)
class Principal:
    """The caller: the ``actor`` services authorize, limited to what the token allows."""

    actor: Actor
    # The stored account, for display only: services authorize with ``actor``, which
    # carries the token's limits (no admin powers without the admin scope).
    user: User
    scopes: frozenset[str]
    token_id: int


def _unauthorized(detail: str) -> HTTPException:
    return HTTPException(status_code=401, detail=detail, headers=CHALLENGE)


async def _record_use(
    request: Request, sessionmaker: async_sessionmaker[AsyncSession], token_id: int
) -> None:
    # A separate short transaction: the use is recorded even when the request later fails.
    address = request.client.host if request.client else None
    async with unit_of_work(sessionmaker) as session:
        await tokens.record_use(session, token_id, address)


async def get_principal(
    request: Request,
    sessionmaker: SessionmakerDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Security(bearer_scheme)],
) -> Principal:
    cached: Principal | None = getattr(request.state, "principal", None)
    if cached is not None:
        return cached
    principal = await _authenticate(request, sessionmaker, credentials)
    request.state.principal = principal
    return principal


async def authenticate_before_body(request: Request) -> None:
    """Refuse (401) a caller without a valid token before any of their body is read.

    FastAPI parses a route's body parameters before it runs any dependency, so the token
    is checked here, from the layer that hands out the body (``app.request_bodies``)."""
    if getattr(request.state, "principal", None) is not None:
        return
    sessionmaker = services_of(request.app).sessionmaker
    await get_principal(request, sessionmaker, await bearer_scheme(request))


async def _authenticate(
    request: Request,
    sessionmaker: async_sessionmaker[AsyncSession],
    credentials: HTTPAuthorizationCredentials | None,
) -> Principal:
    """The token's holder, found in a short transaction of its own that ends before the
    route runs: the request's own session stays unused, so a route that only calls a
    cluster holds no connection while it waits."""
    if credentials is None or credentials.scheme.lower() != "bearer":
        raise _unauthorized("Send a personal access token: Authorization: Bearer <token>.")
    async with unit_of_work(sessionmaker) as session:
        try:
            identity = await tokens.authenticate(session, credentials.credentials)
        except Unauthorized as error:
            raise _unauthorized(error.detail) from None
        actor = await actor_for(session, identity.user)
    limited = Actor(
        user_id=actor.user_id,
        login=actor.login,
        is_site_admin=ADMIN in identity.scopes,
        project_roles=actor.project_roles,
        cluster_usernames=actor.cluster_usernames,
    )
    if tokens.use_is_stale(identity.token):
        await _record_use(request, sessionmaker, identity.token.id)
    return Principal(limited, identity.user, identity.scopes, identity.token.id)


def require_scope(scope: str) -> Any:
    async def check(principal: Annotated[Principal, Depends(get_principal)]) -> Principal:
        if scope not in principal.scopes:
            raise Forbidden(f"This token lacks the '{scope}' scope.")
        return principal

    return Depends(check)


Reader = Annotated[Principal, require_scope(READ)]
Submitter = Annotated[Principal, require_scope(SUBMIT)]


def adapter_for(registry: Schedulers, cluster: str) -> SchedulerAdapter:
    try:
        return registry.get(cluster)
    except UnknownCluster:
        raise NotFound(f"No cluster named {cluster}.") from None


def get_origin(request: Request) -> Origin:
    """API calls are audited as "cli" when they come from the portal's own client."""
    address = request.client.host if request.client else None
    return Origin(api_surface(request.headers.get("user-agent")), address)


OriginDep = Annotated[Origin, Depends(get_origin)]
