"""Poll cycles listing the queue through slurmrestd (``queue_reads = "rest"``) on every Slurm
version: the job list asks slurmctld whether any job changed (ADR 0036), and the poller still
follows every job to its end."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.jobs import states
from app.poller.cycle import poll_cluster_once
from app.scheduler.slurm.adapter import SlurmAdapter
from app.scheduler.slurm.rest_jobs import RestJobs
from app.scheduler.slurm.rest_versions import update_time_form
from tests.integration.poller.conftest import Portal, close_portal, open_portal

pytestmark = pytest.mark.slurm

QUIET_WITHIN = 120.0


@pytest.fixture
async def portal(
    sessionmaker: async_sessionmaker[AsyncSession], slurm_version: str
) -> AsyncIterator[Portal]:
    opened = await open_portal(sessionmaker, slurm_version, transport="rest", queue_reads="rest")
    yield opened
    await close_portal(opened)


def rest_jobs(portal: Portal) -> RestJobs:
    assert isinstance(portal.adapter, SlurmAdapter) and portal.adapter.rest_jobs is not None
    return portal.adapter.rest_jobs


async def test_a_job_is_followed_to_its_end_through_slurmrestd(portal: Portal) -> None:
    job = await portal.service.submit(portal.alice, portal.request("#!/bin/bash\nsleep 4\n"))
    await portal.poll_until(job.id, lambda row: row.state == "running", timeout=60)
    done = await portal.poll_until(job.id, lambda row: states.is_terminal(row.state), 60)
    assert (done.state, done.exit_code) == ("completed", 0)
    assert done.started_at is not None and done.ended_at is not None


async def test_a_cancel_after_quiet_cycles_is_read_by_the_next_cycle(portal: Portal) -> None:
    job = await portal.service.submit(portal.alice, portal.request("#!/bin/bash\nsleep 300\n"))
    await portal.poll_until(job.id, lambda row: row.state == "running", timeout=60)
    listing = rest_jobs(portal).listing
    if update_time_form(await rest_jobs(portal).transport.version()) is not None:
        # Cycles until slurmctld has answered "nothing changed" (other tests' jobs may still
        # end or leave the queue first).
        loop = asyncio.get_running_loop()
        deadline = loop.time() + QUIET_WITHIN
        while listing.unchanged_answers == 0 and loop.time() < deadline:
            await asyncio.sleep(1)
            await poll_cluster_once(portal.sessionmaker, portal.cluster, portal.adapter)
        assert listing.unchanged_answers > 0
    await portal.service.cancel(portal.alice, job.id)
    await poll_cluster_once(portal.sessionmaker, portal.cluster, portal.adapter)
    assert (await portal.job(job.id)).state in ("completing", "cancelled")
