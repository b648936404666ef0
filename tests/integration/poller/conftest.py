"""Helpers for poller tests against the real local Slurm cluster."""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.jobs.requests import JobRequest
from app.jobs.service import JobService
from app.models import Job, Project
from app.poller.cycle import poll_cluster_once
from app.poller.reconcile import Grace
from app.scheduler.base import SchedulerAdapter
from app.scheduler.config import load_clusters
from app.scheduler.registry import build_adapter
from app.users.actor import Actor
from tests.factories import add_member, as_actor, make_project, make_user

CLUSTER = "testcluster"
CLUSTERS_FILE = os.environ.get("PORTAL_CLUSTERS_FILE", "/var/lib/hpcportal-dev/clusters.toml")


@dataclass
class Portal:
    """A portal wired to the real cluster: the service, the adapter and alice."""

    sessionmaker: async_sessionmaker[AsyncSession]
    adapter: SchedulerAdapter
    service: JobService
    alice: Actor
    project: Project

    def request(self, script: str, **fields: object) -> JobRequest:
        return JobRequest(
            project_id=self.project.id,
            script=script,
            name=str(fields.pop("name", "poller-test")),
            time_limit_minutes=int(fields.pop("time_limit_minutes", 5)),  # type: ignore[call-overload]
            memory_mb=100,
            stdout_path="/scratch/alice/poller-test-%j.out",
            **fields,  # type: ignore[arg-type]
        )

    async def job(self, job_id: int) -> Job:
        async with self.sessionmaker() as session:
            row = await session.get(Job, job_id)
            assert row is not None
            return row

    async def poll_until(
        self,
        job_id: int,
        is_done: Callable[[Job], bool],
        timeout: float,
        grace: Grace | None = None,
    ) -> Job:
        """Run poll cycles until ``is_done`` holds for the row, failing at the deadline."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            await poll_cluster_once(self.sessionmaker, CLUSTER, self.adapter, grace=grace)
            row = await self.job(job_id)
            if is_done(row):
                return row
            if loop.time() > deadline:
                pytest.fail(f"job {job_id} still {row.state} after {timeout} s")
            await asyncio.sleep(0.5)


@pytest.fixture
async def slurm_adapter() -> AsyncIterator[SchedulerAdapter]:
    adapter = build_adapter(load_clusters(CLUSTERS_FILE)[CLUSTER], "ssh")
    yield adapter
    await adapter.close()


@pytest.fixture
async def portal(
    sessionmaker: async_sessionmaker[AsyncSession],
    session: AsyncSession,
    slurm_adapter: SchedulerAdapter,
) -> AsyncIterator[Portal]:
    project = await make_project(session, "Physics", slurm_account="physics", cluster=CLUSTER)
    alice = await make_user(session, "alice", cluster_username="alice", cluster=CLUSTER)
    await add_member(session, alice, project)
    await session.commit()
    service = JobService(sessionmaker, {CLUSTER: slurm_adapter})
    yield Portal(sessionmaker, slurm_adapter, service, await as_actor(session, alice), project)
    # The cluster is shared: a failed test must not leave its jobs holding the two CPUs.
    async with sessionmaker() as cleanup:
        ids = list(
            await cleanup.scalars(select(Job.slurm_job_id).where(Job.slurm_job_id.is_not(None)))
        )
    if ids:
        subprocess.run(["scancel", *[str(i) for i in ids]], capture_output=True, check=False)


def sacct_ids_named(name: str) -> list[str]:
    """Allocation ids of every job called ``name`` in Slurm's accounting."""
    output = subprocess.run(
        ["sacct", "-X", "-n", "-P", "-a", "-S", "now-1hours", f"--name={name}", "-o", "JobID"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [line for line in output.split() if line]


async def wait_for_sacct_ids_named(name: str, timeout: float = 30) -> list[str]:
    """Accounting lists a job by name a little after ``sacct -j`` already shows it."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not (found := sacct_ids_named(name)) and loop.time() < deadline:
        await asyncio.sleep(1)
    return found


def squeue_comment(slurm_id: str) -> str:
    output = subprocess.run(
        ["squeue", "-h", "-a", "-t", "all", "-j", slurm_id, "-O", "Comment:100"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return output.strip()
