"""Server-side web sessions: the cookie holds a random secret, the database only its hash."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta
from functools import lru_cache
from typing import Any

from sqlalchemy import bindparam, delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.models.base import utc_now
from app.models.users import User
from app.models.web_sessions import WebSession

SESSION_LIFETIME = timedelta(hours=12)
# Writing last_seen_at on every request would turn every page view into a write.
TOUCH_INTERVAL = timedelta(minutes=5)


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


async def start(
    session: AsyncSession,
    user_id: int,
    replacing: str | None = None,
    *,
    id_token: str | None = None,
) -> str:
    """A new session for ``user_id``; the one the browser held before is ended (no fixation).

    ``id_token``: the identity provider's token, kept to name the session at its logout."""
    if replacing:
        await end(session, replacing)
    token = secrets.token_urlsafe(32)
    now = utc_now()
    session.add(
        WebSession(
            token_hash=_hash(token),
            user_id=user_id,
            csrf_token=secrets.token_urlsafe(32),
            created_at=now,
            last_seen_at=now,
            expires_at=now + SESSION_LIFETIME,
            id_token=id_token,
        )
    )
    await session.flush()
    return token


@lru_cache(maxsize=1)
def _resolve_query() -> Any:
    """Built once: every signed-in request runs it. The token's hash is a bound parameter."""
    return (
        select(WebSession, User)
        .join(User, User.id == WebSession.user_id)
        .where(WebSession.token_hash == bindparam("token_hash"))
    )


async def resolve(session: AsyncSession, token: str) -> tuple[WebSession, User] | None:
    """The live session for ``token`` and its user (one query), or None when unknown or expired."""
    row = (await session.execute(_resolve_query(), {"token_hash": _hash(token)})).one_or_none()
    now = utc_now()
    if row is None or row[0].expires_at <= now:
        return None
    found, user = row[0], row[1]
    if now - found.last_seen_at > TOUCH_INTERVAL:
        found.last_seen_at = now
    return found, user


async def end(session: AsyncSession, token: str) -> str | None:
    """End the session; the identity provider's ID token it was started with, if any."""
    statement = (
        delete(WebSession)
        .where(WebSession.token_hash == _hash(token))
        .returning(WebSession.id_token)
    )
    return (await session.execute(statement)).scalar_one_or_none()


async def end_all_for_user(session: AsyncSession, user_id: int) -> None:
    await session.execute(delete(WebSession).where(WebSession.user_id == user_id))
