"""Usage reports from the real PBS and LSF clusters: a job charged to a project's account (PBS's
``-A``, LSF's ``-P``) is ingested from the scheduler's history (``qstat -x``, ``bhist``) with its
user, elapsed time and CPUs, and rolled up into the project's daily usage."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models.usage import AccountingJob, UsageDaily
from app.reports.ingest import ingest_cycle
from app.scheduler.base import SchedulerAdapter
from app.scheduler.registry import build_adapter
from app.scheduler.types import JobSpec
from tests.contract.conftest import run_dir_for
from tests.factories import make_project
from tests.other_schedulers import scheduler_cluster

SCHEDULERS = [
    pytest.param("pbs", marks=pytest.mark.pbs),
    pytest.param("lsf", marks=pytest.mark.lsf),
]


async def _ended(adapter: SchedulerAdapter, job_id: str) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        found = [info for info in await adapter.accounting([job_id]) if info.job_id == job_id]
        if found and found[0].state.is_terminal:
            return
        await asyncio.sleep(1)
    raise AssertionError(f"{job_id} did not end")


@pytest.mark.parametrize("scheduler", SCHEDULERS)
async def test_a_job_charged_to_a_project_is_ingested_with_its_usage(
    scheduler: str, sessionmaker: async_sessionmaker[AsyncSession], session: AsyncSession
) -> None:
    cluster = scheduler_cluster(scheduler)
    await make_project(session, "Physics", slurm_account="physics", cluster=cluster.name)
    await session.commit()
    adapter = build_adapter(cluster)
    try:
        job = JobSpec(
            script="#!/bin/bash\nsleep 3\n",
            name="ingested",
            account="physics",
            time_limit=5,
            working_dir="/home/alice",
            stdout=f"{run_dir_for('ingested')}/%x-%j.out",
        )
        await adapter.preflight(job, "alice")
        job_id = await adapter.submit(job, "alice")
        await _ended(adapter, job_id)
        since = datetime.now(UTC) - timedelta(minutes=30)

        result = await ingest_cycle(sessionmaker, adapter, cluster.name, first_since=since)
    finally:
        await adapter.close()

    assert result.scheduler_calls == 1
    async with sessionmaker() as check:
        row = (
            await check.execute(select(AccountingJob).where(AccountingJob.job_id == job_id))
        ).scalar_one()
        days = (await check.execute(select(UsageDaily))).scalars().all()
    assert (row.cluster, row.account, row.user_name, row.state) == (
        cluster.name,
        "physics",
        "alice",
        "completed",
    )
    assert row.alloc_cpus >= 1 and 3 <= row.elapsed_seconds < 60
    # Other tests' jobs charged to physics in the window are ingested too; this one is counted.
    mine = [d for d in days if (d.account, d.user_name) == ("physics", "alice")]
    assert sum(d.jobs_total for d in mine) >= 1
    assert sum(d.cpu_seconds for d in mine) >= row.alloc_cpus * row.elapsed_seconds
    assert {d.account for d in days} == {"physics"}
