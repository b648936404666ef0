"""A user's open shells, counted in the database so the limit holds across web processes.

Each open shell holds a row; taking one counts the user's live rows and inserts under the
user's row lock (``hold_for_update``), so two workers opening at once cannot both see room for one
more. The holder renews its row while the shell is open; a row not renewed for ``STALE``
(its process died) no longer counts and is deleted by the next taker.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db import unit_of_work
from app.models.shells import OpenShellSlot
from app.users.repository import hold_for_update

RENEW_EVERY = timedelta(seconds=60)
STALE = 3 * RENEW_EVERY


async def take(
    sessionmaker: async_sessionmaker[AsyncSession],
    user_id: int,
    cluster: str,
    limit: int,
    now: datetime,
) -> int | None:
    """The id of a new slot for the user's shell; None when they already hold ``limit``."""
    async with unit_of_work(sessionmaker) as session:
        await hold_for_update(session, user_id)
        fresh = now - STALE
        mine = OpenShellSlot.user_id == user_id
        await session.execute(delete(OpenShellSlot).where(mine, OpenShellSlot.seen_at < fresh))
        held = await session.scalar(select(func.count()).select_from(OpenShellSlot).where(mine))
        if (held or 0) >= limit:
            return None
        slot = OpenShellSlot(user_id=user_id, cluster=cluster, opened_at=now, seen_at=now)
        session.add(slot)
        await session.flush()
        return slot.id


async def renew(
    sessionmaker: async_sessionmaker[AsyncSession], slot_id: int, now: datetime
) -> None:
    async with unit_of_work(sessionmaker) as session:
        await session.execute(
            update(OpenShellSlot).where(OpenShellSlot.id == slot_id).values(seen_at=now)
        )


async def give_back(sessionmaker: async_sessionmaker[AsyncSession], slot_id: int) -> None:
    async with unit_of_work(sessionmaker) as session:
        await session.execute(delete(OpenShellSlot).where(OpenShellSlot.id == slot_id))
