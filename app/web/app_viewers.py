"""View-only links on the Interactive apps page: the owner of a desktop names who may watch
it and revokes them; the others see the desktops shared with them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import Request
from fastapi.responses import Response
from sqlalchemy.ext.asyncio import AsyncSession

from app.deps import AppsDep, SessionDep
from app.errors import ValidationFailed
from app.interactive import viewers
from app.interactive.definitions import AppDefinition
from app.interactive.sessions import describe, own_sessions
from app.models.base import utc_now
from app.models.users import User
from app.params import PathId
from app.users.actor import Actor
from app.web.auth import CurrentUser, csrf_protected_router
from app.web.views import redirect

router = csrf_protected_router()


async def sharing_context(
    session: AsyncSession, actor: Actor, definitions: Mapping[str, AppDefinition]
) -> dict[str, Any]:
    """The actor's live desktops with who may watch each, and the desktops others share
    with the actor (still running or not, so that an ended one says so)."""
    rows = [
        row
        for row in await own_sessions(session, actor, live_only=True)
        if viewers.can_be_watched(definitions.get(row.app))
    ]
    now = utc_now()
    watched = await viewers.watched_by(session, actor)
    owners = {row.owner_user_id: await session.get(User, row.owner_user_id) for row in watched}
    return {
        "shareable": [describe(row, definitions, now) for row in rows],
        "viewers": await viewers.viewers_of(session, rows),
        "watchable": [
            (describe(row, definitions, now), owners[row.owner_user_id]) for row in watched
        ],
    }


@router.post("/apps/sessions/{session_id:int}/viewers", name="app_session_share")
async def share(
    request: Request,
    session: SessionDep,
    actor: CurrentUser,
    definitions: AppsDep,
    session_id: PathId,
) -> Response:
    login = str((await request.form()).get("login", ""))
    try:
        await viewers.share(session, actor, session_id, login, definitions)
    except ValidationFailed as error:
        problem = (error.fields or {}).get("login") or error.detail
        raise ValidationFailed(str(problem), fields={"login": str(problem)}) from None
    return redirect(request, str(request.url_for("apps")) + "#view-only")


@router.post(
    "/apps/sessions/{session_id:int}/viewers/{viewer_id:int}/revoke",
    name="app_session_revoke",
)
async def revoke(
    request: Request,
    session: SessionDep,
    actor: CurrentUser,
    session_id: PathId,
    viewer_id: PathId,
) -> Response:
    await viewers.revoke(session, actor, session_id, viewer_id)
    return redirect(request, str(request.url_for("apps")) + "#view-only")
