"""What ``seff`` shows for a finished job, rolled up per user and project, and waste flags."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import SupportsFloat

from sqlalchemy import ColumnElement, and_, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.models.projects import Project
from app.models.usage import AccountingJob, UsageDaily
from app.reports.repository import TERMINAL_STATES
from app.reports.usage import visible_project_ids
from app.users.actor import Actor

MEMORY_WASTE_FACTOR = 10
TIME_WASTE_FACTOR = 10
LOW_CPU_EFFICIENCY = 0.25
WASTE_LIMIT = 200


@dataclass(frozen=True, slots=True)
class Usage:
    """The measured and requested resources of one finished job."""

    elapsed_seconds: int
    alloc_cpus: int
    total_cpu_seconds: float | None
    max_rss_mb: float | None
    requested_mem_mb: float | None
    time_limit_seconds: int | None


@dataclass(frozen=True, slots=True)
class Efficiency:
    cpu: float | None
    memory: float | None
    time: float | None
    flags: tuple[str, ...]


def _ratio(used: SupportsFloat | None, available: SupportsFloat | None) -> float | None:
    if used is None or not available:
        return None
    return float(used) / float(available)


def waste_flags(usage: Usage, cpu: float | None) -> tuple[str, ...]:
    flags = []
    rss, asked = usage.max_rss_mb, usage.requested_mem_mb
    if rss and asked and asked >= MEMORY_WASTE_FACTOR * rss:
        flags.append("memory_oversized")
    if usage.alloc_cpus > 1 and cpu is not None and cpu < LOW_CPU_EFFICIENCY:
        flags.append("cpu_underused")
    limit = usage.time_limit_seconds
    if limit and usage.elapsed_seconds and limit >= TIME_WASTE_FACTOR * usage.elapsed_seconds:
        flags.append("time_limit_oversized")
    return tuple(flags)


def efficiency(usage: Usage) -> Efficiency:
    """CPU = total CPU / (elapsed x CPUs); memory = MaxRSS / requested; time = elapsed / limit."""
    cpu = _ratio(usage.total_cpu_seconds, usage.elapsed_seconds * usage.alloc_cpus)
    memory = _ratio(usage.max_rss_mb, usage.requested_mem_mb)
    used_time = _ratio(float(usage.elapsed_seconds), usage.time_limit_seconds)
    return Efficiency(cpu, memory, used_time, waste_flags(usage, cpu))


def record_efficiency(row: AccountingJob) -> Efficiency:
    return efficiency(
        Usage(
            elapsed_seconds=row.elapsed_seconds,
            alloc_cpus=row.alloc_cpus,
            total_cpu_seconds=row.total_cpu_seconds,
            max_rss_mb=row.max_rss_mb,
            requested_mem_mb=row.req_mem_mb,
            time_limit_seconds=row.time_limit_seconds,
        )
    )


@dataclass(frozen=True, slots=True)
class GroupEfficiency:
    group: str
    cpu: float | None
    memory: float | None
    jobs: int


async def efficiency_by(
    session: AsyncSession, actor: Actor, group_by: str, start: date, end: date
) -> list[GroupEfficiency]:
    """Weighted efficiencies per user or project from the rollups (sums, not averages)."""
    project_ids = await visible_project_ids(session, actor)
    group = Project.name if group_by == "project" else UsageDaily.user_name
    u = UsageDaily
    statement = (
        select(
            group,
            func.sum(u.total_cpu_seconds),
            func.sum(u.cpu_seconds),
            func.sum(u.max_rss_mb_sum),
            func.sum(u.req_mem_mb_sum),
            func.sum(u.jobs_total),
        )
        .join(Project, and_(Project.cluster == u.cluster, Project.slurm_account == u.account))
        .where(u.day >= start, u.day <= end)
        .group_by(group)
        .order_by(group)
    )
    if project_ids is not None:
        statement = statement.where(Project.id.in_(project_ids))
    rows = (await session.execute(statement)).all()
    return [
        GroupEfficiency(str(r[0]), _ratio(r[1], r[2]), _ratio(r[3], r[4]), int(r[5] or 0))
        for r in rows
    ]


@dataclass(frozen=True, slots=True)
class WastefulJob:
    row: AccountingJob
    efficiency: Efficiency


def _waste_condition() -> ColumnElement[bool]:
    job = AccountingJob
    return or_(
        and_(job.max_rss_mb > 0, job.req_mem_mb >= MEMORY_WASTE_FACTOR * job.max_rss_mb),
        and_(
            job.alloc_cpus > 1,
            job.elapsed_seconds > 0,
            job.total_cpu_seconds < LOW_CPU_EFFICIENCY * job.alloc_cpus * job.elapsed_seconds,
        ),
        and_(
            job.elapsed_seconds > 0,
            job.time_limit_seconds >= TIME_WASTE_FACTOR * job.elapsed_seconds,
        ),
    )


async def wasteful_jobs(
    session: AsyncSession, actor: Actor, start: date, end: date
) -> Sequence[WastefulJob]:
    """Finished jobs in the range showing at least one wasteful pattern, newest first."""
    project_ids = await visible_project_ids(session, actor)
    job = AccountingJob
    since = datetime.combine(start, time.min, tzinfo=UTC)
    until = datetime.combine(end + timedelta(days=1), time.min, tzinfo=UTC)
    statement = (
        select(job)
        .join(Project, and_(Project.cluster == job.cluster, Project.slurm_account == job.account))
        .where(job.state.in_(TERMINAL_STATES), job.end_time >= since, job.end_time < until)
        .where(_waste_condition())
        .order_by(job.end_time.desc())
        .limit(WASTE_LIMIT)
    )
    if project_ids is not None:
        statement = statement.where(Project.id.in_(project_ids))
    rows = (await session.execute(statement)).scalars().all()
    return [WastefulJob(row, record_efficiency(row)) for row in rows]
