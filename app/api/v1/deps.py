"""Bearer-token authentication, scope checks and the shared services API routes need."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from starlette.exceptions import HTTPException

from app.audit.service import Origin, api_surface
from app.db import release_connection, unit_of_work
from app.deps import SessionDep, SessionmakerDep
from app.errors import Forbidden, NotFound, Unauthorized
from app.models import User
from app.scheduler.base import SchedulerAdapter
from app.scheduler.registry import Schedulers, UnknownCluster
from app.tokens import service as tokens
from app.tokens.scopes import ADMIN, READ, SUBMIT
from app.users.actor import Actor
from app.users.service import actor_for

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
    session: SessionDep,
    sessionmaker: SessionmakerDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Security(bearer_scheme)],
) -> Principal:
    if credentials is None or credentials.scheme.lower() != "bearer":
        raise _unauthorized("Send a personal access token: Authorization: Bearer <token>.")
    try:
        identity = await tokens.authenticate(session, credentials.credentials)
    except Unauthorized as error:
        raise _unauthorized(error.detail) from None
    is_admin = ADMIN in identity.scopes
    actor = await actor_for(session, identity.user)
    limited = Actor(
        user_id=actor.user_id,
        login=actor.login,
        is_site_admin=is_admin,
        project_roles=actor.project_roles,
        cluster_usernames=actor.cluster_usernames,
    )
    # Free this connection before _record_use takes another: a request holding one while
    # waiting for a second deadlocks the pool once every connection is held that way.
    # Job commands that call the cluster next then hold none either.
    await release_connection(session)
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
