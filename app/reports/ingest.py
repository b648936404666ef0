"""Incremental ingestion of scheduler accounting into ``accounting_jobs`` and daily rollups.

Each cycle asks for one window, from the cluster's high-water mark (minus an overlap that
catches records slurmdbd writes late) up to now, with ONE accounting call made with the
service identity, outside any database transaction. Rows are upserted by (cluster, job id)
and the days they ended on are recomputed, so a cycle can be repeated safely.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db import unit_of_work
from app.models.base import utc_now
from app.reports import repository
from app.reports.records import days_touched, rows_for_accounts
from app.scheduler.base import SchedulerAdapter

OVERLAP = timedelta(minutes=15)
FIRST_WINDOW = timedelta(days=1)


@dataclass(frozen=True, slots=True)
class IngestResult:
    cluster: str
    since: datetime
    until: datetime
    records: int
    stored: int
    days_rebuilt: int
    scheduler_calls: int


async def _window_start(
    sessionmaker: async_sessionmaker[AsyncSession],
    cluster: str,
    until: datetime,
    first_since: datetime | None,
) -> tuple[datetime, set[str]]:
    async with unit_of_work(sessionmaker) as session:
        mark = await repository.get_mark(session, cluster)
        accounts = await repository.project_accounts(session, cluster)
    if mark is not None:
        return mark.window_end - OVERLAP, accounts
    return first_since or until - FIRST_WINDOW, accounts


async def ingest_cycle(
    sessionmaker: async_sessionmaker[AsyncSession],
    adapter: SchedulerAdapter,
    cluster: str,
    *,
    first_since: datetime | None = None,
    now: datetime | None = None,
) -> IngestResult:
    """Ingest one window of ``cluster``'s accounting for the portal's projects' accounts.

    ``first_since`` only applies before the first cycle (default: one day back). The
    window ends at ``now``, taken before the scheduler is asked, so every job that ended
    before it is final in the answer; rollups count exactly those jobs.
    """
    until = now or utc_now()
    since, accounts = await _window_start(sessionmaker, cluster, until, first_since)
    infos = await adapter.accounting(since=since)
    rows = rows_for_accounts(cluster, infos, accounts)
    async with unit_of_work(sessionmaker) as session:
        await repository.upsert_jobs(session, rows)
        rebuilt = await repository.rebuild_days(session, cluster, days_touched(rows), until)
        await repository.save_mark(session, cluster, until, len(rows))
    return IngestResult(cluster, since, until, len(infos), len(rows), rebuilt, 1)
