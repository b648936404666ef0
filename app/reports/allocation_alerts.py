"""After each usage ingestion: the scheduler's allocations stored, and each project that
crossed 80 % or 95 % of its allocation announced to its managers, once per allocation size."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db import unit_of_work
from app.models.allocations import AllocationAlert
from app.models.base import utc_now
from app.models.projects import Project
from app.models.usage import AssociationLimit
from app.notifications.allocation_outbox import record_allocation_reached
from app.reports.allocation import THRESHOLDS, burndown
from app.scheduler.types import TresMinutesLimit


async def store_limits(
    session: AsyncSession, cluster: str, limits: Sequence[TresMinutesLimit]
) -> None:
    """Replace the cluster's GrpTRESMins limits with what the scheduler has now."""
    await session.execute(delete(AssociationLimit).where(AssociationLimit.cluster == cluster))
    now = utc_now()
    session.add_all(
        AssociationLimit(
            cluster=cluster,
            account=limit.account,
            user_name=limit.user,
            tres=tres,
            minutes=minutes,
            fetched_at=now,
        )
        for limit in limits
        for tres, minutes in limit.minutes.items()
    )
    await session.flush()


async def _announced(session: AsyncSession, project_id: int, limit: int) -> set[int]:
    rows = await session.scalars(
        select(AllocationAlert.threshold).where(
            AllocationAlert.project_id == project_id, AllocationAlert.limit_minutes == limit
        )
    )
    return set(rows)


async def announce_thresholds(
    session: AsyncSession, cluster: str, today: date
) -> list[tuple[int, int]]:
    """(project id, threshold) for each threshold newly crossed, with its notifications queued.

    A new allocation size starts afresh: a project whose allocation grew is told again when
    it nears the new one.
    """
    projects = await session.scalars(
        select(Project).where(Project.cluster == cluster, Project.is_active.is_(True))
    )
    crossed = []
    for project in projects:
        found = await burndown(session, project, today)
        if found.limit_minutes is None or found.used_fraction is None:
            continue
        done = await _announced(session, project.id, found.limit_minutes)
        for threshold in THRESHOLDS:
            if found.used_fraction * 100 >= threshold and threshold not in done:
                session.add(
                    AllocationAlert(
                        project_id=project.id,
                        limit_minutes=found.limit_minutes,
                        threshold=threshold,
                    )
                )
                await record_allocation_reached(session, project.id, threshold)
                crossed.append((project.id, threshold))
    return crossed


async def refresh(
    sessionmaker: async_sessionmaker[AsyncSession],
    cluster: str,
    limits: Sequence[TresMinutesLimit],
    today: date,
) -> list[tuple[int, int]]:
    """Store the limits and announce what was crossed, in one short transaction."""
    async with unit_of_work(sessionmaker) as session:
        await store_limits(session, cluster, limits)
        return await announce_thresholds(session, cluster, today)
