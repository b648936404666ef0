"""A cycle after many tracked jobs left the queue at once (a mass cancel of a large queue,
or a poller that was down while they ended), against the real clusters over SSH.

Every one of those jobs is asked of accounting in the same cycle. Asked in one sacct call,
20,000 ids make a command line the login node's shell refuses ("Argument list too long"),
and every later cycle would fail the same way, freezing every job's state on the cluster.
"""

from __future__ import annotations

import math
import uuid

import pytest
from sqlalchemy import delete, func, insert, select

from app.models.base import utc_now
from app.models.jobs import Job
from app.poller.cycle import ACCOUNTING_BATCH, poll_cluster_once
from tests.integration.poller.conftest import Portal

pytestmark = pytest.mark.slurm

GONE = 20_000
NAME = f"gone-{uuid.uuid4().hex[:8]}"
# Far above any id the dev clusters hand out in a test run.
FIRST_GONE_ID = 90_000_000


async def _track_gone_jobs(portal: Portal) -> None:
    """Rows for GONE jobs the queue no longer lists, last seen a moment ago."""
    now = utc_now()
    rows = [
        {
            "uuid": str(uuid.uuid4()),
            "owner_user_id": portal.alice.user_id,
            "project_id": portal.project.id,
            "cluster": portal.cluster,
            "parameters": {},
            "script": "#!/bin/bash\ntrue\n",
            "name": NAME,
            "state": "pending",
            "slurm_job_id": str(FIRST_GONE_ID + offset),
            "submitted_at": now,
            "last_seen_at": now,
        }
        for offset in range(GONE)
    ]
    async with portal.sessionmaker() as session:
        await session.execute(insert(Job), rows)
        await session.commit()


async def _states_of_gone_jobs(portal: Portal) -> dict[str, int]:
    query = select(Job.state, func.count()).where(Job.name == NAME).group_by(Job.state)
    async with portal.sessionmaker() as session:
        return {state: count for state, count in (await session.execute(query)).all()}


async def _forget_gone_jobs(portal: Portal) -> None:
    async with portal.sessionmaker() as session:
        await session.execute(delete(Job).where(Job.name == NAME))
        await session.commit()


async def test_a_cycle_after_twenty_thousand_jobs_left_the_queue_reads_them_in_batches(
    portal: Portal,
) -> None:
    job = await portal.service.submit(portal.alice, portal.request("#!/bin/bash\nsleep 120\n"))
    await portal.poll_until(job.id, lambda row: row.state in ("pending", "running"), timeout=60)
    await portal.service.cancel(portal.alice, job.id)
    await _track_gone_jobs(portal)
    try:
        result = await poll_cluster_once(portal.sessionmaker, portal.cluster, portal.adapter)
        assert result.is_ok, result.error
        assert result.tracked >= GONE + 1
        # The queue, then accounting for the gone jobs (and the cancelled one, once the queue
        # lists it as ended) in batches.
        assert result.calls >= 1 + math.ceil(GONE / ACCOUNTING_BATCH)
        done = await portal.poll_until(job.id, lambda row: row.state == "cancelled", timeout=90)
        assert done.ended_at is not None
        # Neither queued nor in accounting, and seen less than the grace for missing jobs
        # ago: nothing is concluded about them yet.
        assert await _states_of_gone_jobs(portal) == {"pending": GONE}
    finally:
        await _forget_gone_jobs(portal)
