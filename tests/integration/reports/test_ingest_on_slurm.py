"""Ingestion from the real cluster's accounting, checked against sacct itself."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models.usage import AccountingJob, UsageDaily
from app.reports.ingest import ingest_cycle
from app.scheduler.base import SchedulerAdapter
from app.scheduler.slurm.commands import sacct_argv
from tests.factories import make_project
from tests.integration.reports.conftest import (
    CLUSTER,
    TERMINAL_PREFIXES,
    sacct_rows,
    sbatch_as,
    wait_until_finished,
)

pytestmark = pytest.mark.slurm
ACCOUNTS = ("physics", "chemistry")


def _sacct_starttime(since: datetime) -> str:
    """The exact --starttime text the adapter sends, so both sides see one window."""
    return next(arg for arg in sacct_argv(since=since) if arg.startswith("--starttime="))


def expected_usage(since: datetime, until: datetime) -> Counter[tuple[str, str, str]]:
    """CPU-seconds per (account, user, partition) computed from sacct's AllocCPUS x ElapsedRaw."""
    totals: Counter[tuple[str, str, str]] = Counter()
    for row in sacct_rows(_sacct_starttime(since), "--endtime=now"):
        if row["Account"] not in ACCOUNTS or not row["State"].startswith(TERMINAL_PREFIXES):
            continue
        end = datetime.fromisoformat(row["End"]).replace(tzinfo=UTC)
        if end < until:
            key = (row["Account"], row["User"], row["Partition"])
            totals[key] += int(row["AllocCPUS"]) * int(row["ElapsedRaw"])
    return totals


async def stored_usage(session: AsyncSession) -> Counter[tuple[str, str, str]]:
    totals: Counter[tuple[str, str, str]] = Counter()
    for row in (await session.execute(select(UsageDaily))).scalars():
        totals[(row.account, row.user_name, row.partition)] += row.cpu_seconds
    return totals


async def snapshot(session: AsyncSession) -> tuple[list[tuple[object, ...]], int]:
    rollups = (await session.execute(select(UsageDaily))).scalars().all()
    values = sorted(
        (r.account, r.user_name, r.partition, r.day, r.cpu_seconds, r.jobs_total, r.mem_mb_seconds)
        for r in rollups
    )
    count = len((await session.execute(select(AccountingJob.id))).all())
    return values, count


async def test_plain_sbatch_jobs_are_ingested_with_sacct_figures_and_reingesting_changes_nothing(
    sessionmaker: async_sessionmaker[AsyncSession],
    session: AsyncSession,
    slurm_adapter: SchedulerAdapter,
) -> None:
    for account in ACCOUNTS:
        await make_project(session, account.title(), slurm_account=account, cluster=CLUSTER)
    await session.commit()
    submitted_after = (datetime.now(UTC) - timedelta(seconds=2)).strftime("%Y-%m-%dT%H:%M:%S")
    alice_job = sbatch_as("alice", "physics", "sleep 2")
    bob_job = sbatch_as("bob", "chemistry", "sleep 1")
    await wait_until_finished([alice_job, bob_job], submitted_after)
    since = datetime.now(UTC) - timedelta(minutes=30)

    first = await ingest_cycle(sessionmaker, slurm_adapter, CLUSTER, first_since=since)

    assert first.scheduler_calls == 1
    expected = expected_usage(since, first.until)
    async with sessionmaker() as check:
        ids = set((await check.execute(select(AccountingJob.job_id))).scalars())
        assert {alice_job, bob_job} <= ids
        assert await stored_usage(check) == expected
        before = await snapshot(check)
    assert expected[("physics", "alice", "debug")] > 0
    assert expected[("chemistry", "bob", "debug")] > 0

    await ingest_cycle(sessionmaker, slurm_adapter, CLUSTER, now=first.until)

    async with sessionmaker() as check:
        after = await snapshot(check)
    assert after[0] == before[0]
