"""Every query on announcements and their dismissals."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any

from sqlalchemy import BindParameter, ColumnElement, and_, bindparam, delete, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.models.announcements import Announcement, AnnouncementDismissal
from app.models.clusters import ClusterStatus


def _shown_at(now: datetime | BindParameter[datetime]) -> ColumnElement[bool]:
    return and_(
        Announcement.shown_from <= now,
        or_(Announcement.shown_until.is_(None), Announcement.shown_until > now),
    )


# Ids are 32-bit integers: the first page asks for those up to the largest.
_LARGEST_ID = 2**31 - 1


@lru_cache(maxsize=1)
def _shown_query() -> Any:
    """Built once, since every full page asks (its banner); the moment, the page's upper
    id and its size are bound parameters."""
    return (
        select(Announcement)
        .where(_shown_at(bindparam("now")), Announcement.id <= bindparam("upto"))
        .order_by(Announcement.id.desc())
        .limit(bindparam("size"))
    )


async def list_shown(
    session: AsyncSession, now: datetime, *, after: int | None = None, limit: int = 100
) -> list[Announcement]:
    """Announcements shown at ``now``, newest first, keyset-paged on the id."""
    upto = after - 1 if after is not None else _LARGEST_ID
    values = {"now": now, "upto": upto, "size": limit}
    return list(await session.scalars(_shown_query(), values))


async def list_all(session: AsyncSession, limit: int = 200) -> list[Announcement]:
    """Every announcement, current or not, newest first (the administrators' list)."""
    rows = await session.scalars(select(Announcement).order_by(Announcement.id.desc()).limit(limit))
    return list(rows)


async def dismissed_ids(session: AsyncSession, user_id: int, ids: Sequence[int]) -> set[int]:
    if not ids:
        return set()
    rows = await session.scalars(
        select(AnnouncementDismissal.announcement_id).where(
            AnnouncementDismissal.user_id == user_id,
            AnnouncementDismissal.announcement_id.in_(ids),
        )
    )
    return set(rows)


async def get(session: AsyncSession, announcement_id: int) -> Announcement | None:
    return await session.get(Announcement, announcement_id)


async def add_dismissal(session: AsyncSession, announcement_id: int, user_id: int) -> None:
    if await session.get(AnnouncementDismissal, (announcement_id, user_id)) is None:
        session.add(AnnouncementDismissal(announcement_id=announcement_id, user_id=user_id))


async def list_maintenance(session: AsyncSession, cluster: str | None = None) -> list[Announcement]:
    query = select(Announcement).where(Announcement.source == "maintenance")
    if cluster is not None:
        query = query.where(Announcement.cluster == cluster)
    return list(await session.scalars(query))


async def delete_ids(session: AsyncSession, ids: Sequence[int]) -> None:
    if ids:
        await session.execute(delete(Announcement).where(Announcement.id.in_(ids)))


async def partition_default_minutes(
    session: AsyncSession, cluster: str, partition: str | None
) -> int | None:
    """The default time limit of ``partition`` (or of the default partition), as the poller
    last reported the cluster's partitions."""
    status = await session.get(ClusterStatus, cluster)
    for record in (status.partitions or []) if status is not None else []:
        chosen = record.get("name") == partition if partition else record.get("is_default")
        minutes = record.get("default_minutes")
        if chosen:
            return minutes if isinstance(minutes, int) and minutes > 0 else None
    return None
