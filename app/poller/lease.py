"""One active poller per cluster: a lease row taken and renewed with conditional writes.

The UPDATE only succeeds for the current holder or once the lease has expired, and the
INSERT only for the first taker (the primary key decides), so this works the same on
SQLite and PostgreSQL without advisory locks.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db import unit_of_work
from app.models.clusters import PollerLease


async def _take_existing(
    sessionmaker: async_sessionmaker[AsyncSession],
    cluster: str,
    holder: str,
    now: datetime,
    expires_at: datetime,
) -> bool:
    async with unit_of_work(sessionmaker) as session:
        result = await session.execute(
            update(PollerLease)
            .where(
                PollerLease.cluster == cluster,
                or_(PollerLease.holder == holder, PollerLease.expires_at < now),
            )
            .values(holder=holder, expires_at=expires_at)
            .execution_options(synchronize_session=False)
        )
        return getattr(result, "rowcount", 0) == 1


async def acquire(
    sessionmaker: async_sessionmaker[AsyncSession],
    cluster: str,
    holder: str,
    now: datetime,
    duration: timedelta,
) -> bool:
    """Take or renew the lease; True when ``holder`` now holds it until ``now + duration``."""
    expires_at = now + duration
    if await _take_existing(sessionmaker, cluster, holder, now, expires_at):
        return True
    try:
        async with unit_of_work(sessionmaker) as session:
            session.add(PollerLease(cluster=cluster, holder=holder, expires_at=expires_at))
    except IntegrityError:
        return False
    return True


async def release(
    sessionmaker: async_sessionmaker[AsyncSession], cluster: str, holder: str, now: datetime
) -> None:
    """Let a standby take over at once instead of waiting for expiry."""
    async with unit_of_work(sessionmaker) as session:
        await session.execute(
            update(PollerLease)
            .where(PollerLease.cluster == cluster, PollerLease.holder == holder)
            .values(expires_at=now)
            .execution_options(synchronize_session=False)
        )


async def holds_any(
    sessionmaker: async_sessionmaker[AsyncSession], holder: str, now: datetime
) -> bool:
    """Whether ``holder`` is the active poller of at least one cluster."""
    async with sessionmaker() as session:
        query = select(PollerLease.cluster).where(
            PollerLease.holder == holder, PollerLease.expires_at > now
        )
        return (await session.scalars(query.limit(1))).first() is not None
