"""View-only links: a desktop's owner names other portal users who may watch it.

Only the owner shares and revokes, only a desktop (``kind = "vnc"``) can be shared, and a
viewer only ever watches: the proxy drops whatever a viewer's browser sends that would act
on the desktop (app/interactive/rfb.py). For anyone neither owner nor viewer, the session
does not exist.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import NotFound, ValidationFailed
from app.i18n import _
from app.interactive.definitions import AppDefinition
from app.interactive.sessions import own_session, state_of
from app.models.interactive import InteractiveSession, InteractiveSessionViewer
from app.models.users import User
from app.users import repository as users
from app.users.actor import Actor

Role = Literal["owner", "viewer"]


@dataclass(frozen=True, slots=True)
class ViewerView:
    id: int
    login: str
    display_name: str


def can_be_watched(definition: AppDefinition | None) -> bool:
    return definition is not None and definition.kind == "vnc"


async def share(
    session: AsyncSession,
    actor: Actor,
    session_id: int,
    login: str,
    definitions: Mapping[str, AppDefinition],
) -> InteractiveSessionViewer:
    """Let the user signed in as ``login`` watch the actor's own running desktop."""
    row = await own_session(session, actor, session_id)
    if not can_be_watched(definitions.get(row.app)):
        raise ValidationFailed(_("Only a desktop can be shown to someone else."))
    if state_of(row) == "ended":
        raise ValidationFailed(_("This session has ended."))
    user = await users.get_by_login(session, login.strip())
    if user is None or not user.is_active:
        problem = _("no portal user signs in as %(login)s", login=login)
        raise ValidationFailed(fields={"login": problem})
    if user.id == actor.user_id:
        raise ValidationFailed(fields={"login": _("you already see your own desktop")})
    found = await _viewer(session, row.id, user.id)
    if found is not None:
        return found
    viewer = InteractiveSessionViewer(session_id=row.id, user_id=user.id)
    session.add(viewer)
    await session.flush()
    return viewer


async def revoke(session: AsyncSession, actor: Actor, session_id: int, viewer_id: int) -> None:
    """The viewer no longer reaches the desktop; an open view closes within seconds."""
    row = await own_session(session, actor, session_id)
    await session.execute(
        delete(InteractiveSessionViewer).where(
            InteractiveSessionViewer.id == viewer_id,
            InteractiveSessionViewer.session_id == row.id,
        )
    )


async def _viewer(
    session: AsyncSession, session_id: int, user_id: int
) -> InteractiveSessionViewer | None:
    query = select(InteractiveSessionViewer).where(
        InteractiveSessionViewer.session_id == session_id,
        InteractiveSessionViewer.user_id == user_id,
    )
    return (await session.scalars(query)).one_or_none()


async def viewers_of(
    session: AsyncSession, rows: Sequence[InteractiveSession]
) -> dict[int, list[ViewerView]]:
    """Who may watch each of ``rows``, by session id."""
    ids = [row.id for row in rows]
    if not ids:
        return {}
    query = (
        select(InteractiveSessionViewer.id, InteractiveSessionViewer.session_id, User)
        .join(User, User.id == InteractiveSessionViewer.user_id)
        .where(InteractiveSessionViewer.session_id.in_(ids))
        .order_by(User.login)
    )
    found: dict[int, list[ViewerView]] = {}
    for viewer_id, session_id, user in await session.execute(query):
        view = ViewerView(viewer_id, user.login, user.display_name)
        found.setdefault(session_id, []).append(view)
    return found


async def session_by_uuid_for(
    session: AsyncSession, user_id: int, session_uuid: str
) -> tuple[InteractiveSession, Role]:
    """The session named in a path, if ``user_id`` owns it or may watch it; NotFound else."""
    row = (
        (await session.scalars(
            select(InteractiveSession).where(InteractiveSession.uuid == session_uuid[:36])
        ))
        .unique()
        .one_or_none()
    )  # fmt: skip
    if row is not None and row.owner_user_id == user_id:
        return row, "owner"
    if row is not None and await _viewer(session, row.id, user_id) is not None:
        return row, "viewer"
    raise NotFound(_("No such session."))


async def watched_by(session: AsyncSession, actor: Actor) -> list[InteractiveSession]:
    """The sessions others let the actor watch, newest first."""
    query = (
        select(InteractiveSession)
        .join(InteractiveSessionViewer)
        .where(InteractiveSessionViewer.user_id == actor.user_id)
        .order_by(InteractiveSession.id.desc())
    )
    return list((await session.scalars(query)).unique())


async def note_viewed(session: AsyncSession, session_uuid: str, now: datetime) -> None:
    """Someone (its owner or a viewer) has the desktop open at ``now``: the ``no_viewer``
    idle probe's clock (app/interactive/idle.py)."""
    await session.execute(
        update(InteractiveSession)
        .where(InteractiveSession.uuid == session_uuid)
        .values(viewed_at=now)
    )
