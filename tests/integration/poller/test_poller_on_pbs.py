"""Poll cycles against the real OpenPBS cluster, on PostgreSQL: the portal's submission path,
one listing call per cycle, and the end states PBS reports."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.jobs import states
from app.jobs.service import JobService
from app.models.jobs import Job
from app.poller.cycle import poll_cluster_once
from app.scheduler.base import SchedulerAdapter
from app.scheduler.registry import build_adapter
from app.scheduler.types import JobInfo
from tests.factories import add_member, as_actor, make_project, make_user
from tests.integration.poller.conftest import Portal
from tests.other_schedulers import run_on, scheduler_cluster

pytestmark = pytest.mark.pbs


class CountingAdapter:
    """The PBS adapter, counting the listing calls the poll cycles make."""

    def __init__(self, inner: SchedulerAdapter) -> None:
        self.inner = inner
        self.listings = 0

    async def queue(self) -> list[JobInfo]:
        self.listings += 1
        return await self.inner.queue()

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


@pytest.fixture
async def portal(sessionmaker: async_sessionmaker[AsyncSession]) -> AsyncIterator[Portal]:
    config = scheduler_cluster("pbs")
    adapter = CountingAdapter(build_adapter(config))
    async with sessionmaker() as session:
        project = await make_project(
            session, "Physics", slurm_account="physics", cluster=config.name
        )
        alice = await make_user(session, "alice", cluster_username="alice", cluster=config.name)
        await add_member(session, alice, project)
        await session.commit()
        actor = await as_actor(session, alice)
    service = JobService(sessionmaker, {config.name: adapter})  # type: ignore[dict-item]
    yield Portal(sessionmaker, adapter, service, actor, project, "pbs", config.name)  # type: ignore[arg-type]
    async with sessionmaker() as session:
        ids = list(
            await session.scalars(select(Job.slurm_job_id).where(Job.slurm_job_id.is_not(None)))
        )
    if ids:
        run_on("pbs", ["qdel", *[str(i) for i in ids]])
    await adapter.inner.close()


async def test_a_job_goes_pending_running_completed_with_one_listing_a_cycle(
    portal: Portal,
) -> None:
    job = await portal.service.submit(portal.alice, portal.request("#!/bin/bash\nsleep 4\n"))
    assert job.state == "pending" and (job.slurm_job_id or "").endswith(".pbshead")
    adapter = portal.adapter
    assert isinstance(adapter, CountingAdapter)
    before = adapter.listings
    await poll_cluster_once(portal.sessionmaker, portal.cluster, adapter)  # type: ignore[arg-type]
    assert adapter.listings - before == 1
    await portal.poll_until(job.id, lambda row: row.state == "running", timeout=60)
    done = await portal.poll_until(job.id, lambda row: states.is_terminal(row.state), 60)
    assert (done.state, done.exit_code) == ("completed", 0)
    assert done.started_at is not None and done.ended_at is not None
    assert done.elapsed_seconds is not None and done.elapsed_seconds >= 3


async def test_exit_3_is_failed_with_code_3(portal: Portal) -> None:
    job = await portal.service.submit(portal.alice, portal.request("#!/bin/bash\nexit 3\n"))
    done = await portal.poll_until(job.id, lambda row: states.is_terminal(row.state), 60)
    assert (done.state, done.exit_code, done.exit_signal) == ("failed", 3, None)


async def test_a_cancelled_job_ends_cancelled(portal: Portal) -> None:
    job = await portal.service.submit(portal.alice, portal.request("#!/bin/bash\nsleep 120\n"))
    await portal.poll_until(job.id, lambda row: row.state == "running", timeout=60)
    await portal.service.cancel(portal.alice, job.id)
    done = await portal.poll_until(job.id, lambda row: states.is_terminal(row.state), 60)
    assert done.state == "cancelled"


async def test_an_array_with_a_failing_task_has_a_row_per_task(portal: Portal) -> None:
    body = '#!/bin/bash\n[ "$PBS_ARRAY_INDEX" != 2 ] || exit 3\n'
    job = await portal.service.submit(portal.alice, portal.request(body, array_spec="1-3"))
    assert (job.slurm_job_id or "").endswith("[].pbshead")
    done = await portal.poll_until(job.id, lambda row: states.is_terminal(row.state), 90)
    assert (done.state, done.exit_code) == ("failed", 3)
    async with portal.sessionmaker() as session:
        tasks = list(await session.scalars(select(Job).where(Job.array_parent_id == job.id)))
    by_index = {t.array_task_id: (t.slurm_job_id, t.state, t.exit_code) for t in tasks}
    number = (job.slurm_job_id or "").split("[")[0]
    assert by_index == {
        1: (f"{number}[1].pbshead", "completed", 0),
        2: (f"{number}[2].pbshead", "failed", 3),
        3: (f"{number}[3].pbshead", "completed", 0),
    }
