"""Queries behind ingestion: upserts of accounting rows, day rollups and the ingest mark."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from sqlalchemy import case, delete, func, literal, select
from sqlalchemy import insert as plain_insert
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from app.models.base import utc_now
from app.models.projects import Project
from app.models.usage import AccountingJob, UsageDaily, UsageIngestMark
from app.scheduler.states import JobState

UPSERT_CHUNK = 1000
TERMINAL_STATES = [state.value for state in JobState if state.is_terminal]
_UPDATED = [
    column.name
    for column in AccountingJob.__table__.columns
    if column.name not in ("id", "cluster", "job_id", "submit_time")
]


async def project_accounts(session: AsyncSession, cluster: str) -> set[str]:
    result = await session.execute(
        select(Project.slurm_account).where(Project.cluster == cluster).distinct()
    )
    return set(result.scalars())


async def get_mark(session: AsyncSession, cluster: str) -> UsageIngestMark | None:
    return await session.get(UsageIngestMark, cluster)


async def save_mark(session: AsyncSession, cluster: str, window_end: datetime, count: int) -> None:
    mark = await session.get(UsageIngestMark, cluster)
    if mark is None:
        mark = UsageIngestMark(cluster=cluster, window_end=window_end)
        session.add(mark)
    # Never move backwards: a slow cycle finishing late must not re-open an older window.
    mark.window_end = max(mark.window_end, window_end)
    mark.last_run_at = utc_now()
    mark.last_job_count = count
    await session.flush()


def _insert_for(session: AsyncSession) -> Any:
    dialect = session.get_bind().dialect.name
    return postgresql.insert if dialect == "postgresql" else sqlite.insert


async def upsert_jobs(session: AsyncSession, rows: Sequence[dict[str, Any]]) -> None:
    """Insert or refresh rows by (cluster, job id, submit time); repeating changes nothing."""
    if not rows:
        return
    insert = _insert_for(session)
    now = utc_now()
    for start in range(0, len(rows), UPSERT_CHUNK):
        chunk = [{**row, "ingested_at": now} for row in rows[start : start + UPSERT_CHUNK]]
        statement = insert(AccountingJob).values(chunk)
        statement = statement.on_conflict_do_update(
            index_elements=["cluster", "job_id", "submit_time"],
            set_={name: statement.excluded[name] for name in _UPDATED},
        )
        await session.execute(statement)


def _count(state: str) -> Any:
    return func.sum(case((AccountingJob.state == state, 1), else_=0))


def _day_aggregate(cluster: str, day: date, cut_off: datetime) -> Any:
    start = datetime.combine(day, time.min, tzinfo=UTC)
    end = min(start + timedelta(days=1), cut_off)
    job = AccountingJob
    known = ("completed", "failed", "cancelled", "timeout")
    return (
        select(
            literal(cluster),
            func.coalesce(job.account, ""),
            func.coalesce(job.user_name, ""),
            func.coalesce(job.partition, ""),
            literal(day, UsageDaily.day.type),
            func.sum(job.alloc_cpus * job.elapsed_seconds),
            func.sum(job.alloc_gpus * job.elapsed_seconds),
            func.sum(job.alloc_mem_mb * job.elapsed_seconds),
            func.coalesce(func.sum(job.total_cpu_seconds), 0.0),
            func.coalesce(func.sum(job.req_mem_mb), 0),
            func.coalesce(func.sum(job.max_rss_mb), 0),
            func.count(),
            *(_count(state) for state in known),
            func.sum(case((job.state.in_(known), 0), else_=1)),
        )
        .where(
            job.cluster == cluster,
            job.state.in_(TERMINAL_STATES),
            job.end_time >= start,
            job.end_time < end,
        )
        .group_by(job.account, job.user_name, job.partition)
    )


_ROLLUP_COLUMNS = [
    "cluster",
    "account",
    "user_name",
    "partition",
    "day",
    "cpu_seconds",
    "gpu_seconds",
    "mem_mb_seconds",
    "total_cpu_seconds",
    "req_mem_mb_sum",
    "max_rss_mb_sum",
    "jobs_total",
    "jobs_completed",
    "jobs_failed",
    "jobs_cancelled",
    "jobs_timeout",
    "jobs_other",
]


async def rebuild_days(
    session: AsyncSession, cluster: str, days: Iterable[date], cut_off: datetime
) -> int:
    """Recompute the rollups of whole days from the stored rows, counting jobs ended before
    ``cut_off`` (later ones are counted once a window that covers them has been ingested)."""
    rebuilt = 0
    for day in sorted(set(days)):
        await session.execute(
            delete(UsageDaily).where(UsageDaily.cluster == cluster, UsageDaily.day == day)
        )
        insert = plain_insert(UsageDaily).from_select(
            _ROLLUP_COLUMNS, _day_aggregate(cluster, day, cut_off)
        )
        await session.execute(insert)
        rebuilt += 1
    return rebuilt
