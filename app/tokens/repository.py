"""Every query on api_tokens, named for what the caller wants."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.models.api_tokens import ApiToken
from app.models.users import User


async def add(session: AsyncSession, token: ApiToken) -> ApiToken:
    session.add(token)
    await session.flush()
    return token


async def list_for_user(session: AsyncSession, user_id: int) -> Sequence[ApiToken]:
    query = (
        select(ApiToken)
        .where(ApiToken.user_id == user_id)
        .order_by(ApiToken.created_at.desc(), ApiToken.id.desc())
    )
    return (await session.scalars(query)).all()


async def get_for_user(session: AsyncSession, token_id: int, user_id: int) -> ApiToken | None:
    query = select(ApiToken).where(ApiToken.id == token_id, ApiToken.user_id == user_id)
    return (await session.scalars(query)).one_or_none()


async def get_with_owner_by_hash(
    session: AsyncSession, token_hash: str
) -> tuple[ApiToken, User] | None:
    query = (
        select(ApiToken, User)
        .join(User, User.id == ApiToken.user_id)
        .where(ApiToken.token_hash == token_hash)
    )
    row = (await session.execute(query)).one_or_none()
    return None if row is None else (row[0], row[1])


async def record_use_if_stale(
    session: AsyncSession, token_id: int, address: str | None, now: datetime, stale_before: datetime
) -> bool:
    """Set last-used time and address unless they were set after ``stale_before``.

    The condition lives in the UPDATE so concurrent requests write at most once.
    """
    statement = (
        update(ApiToken)
        .where(
            ApiToken.id == token_id,
            or_(ApiToken.last_used_at.is_(None), ApiToken.last_used_at < stale_before),
        )
        .values(last_used_at=now, last_used_ip=address)
        .execution_options(synchronize_session=False)
    )
    result = await session.execute(statement)
    return bool(getattr(result, "rowcount", 0))


async def revoke_all_for_user(session: AsyncSession, user_id: int, now: datetime) -> int:
    result = await session.execute(
        update(ApiToken)
        .where(ApiToken.user_id == user_id, ApiToken.revoked_at.is_(None))
        .values(revoked_at=now)
    )
    return int(getattr(result, "rowcount", 0) or 0)
