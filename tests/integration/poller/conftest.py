"""Helpers for poller tests against the real local Slurm cluster."""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.jobs.requests import JobRequest
from app.jobs.service import JobService
from app.models.jobs import Job
from app.models.projects import Project
from app.poller.cycle import poll_cluster_once
from app.poller.reconcile import Grace
from app.scheduler.base import SchedulerAdapter
from app.scheduler.config import Transport, load_clusters
from app.scheduler.registry import build_adapter
from app.users.actor import Actor
from tests.factories import add_member, as_actor, make_project, make_user
from tests.slurm_versions import cluster_config, run_on, versions

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
    version: str
    cluster: str

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
            await poll_cluster_once(self.sessionmaker, self.cluster, self.adapter, grace=grace)
            row = await self.job(job_id)
            if is_done(row):
                return row
            if loop.time() > deadline:
                pytest.fail(f"job {job_id} still {row.state} after {timeout} s")
            await asyncio.sleep(0.5)


@pytest.fixture
async def slurm_adapter() -> AsyncIterator[SchedulerAdapter]:
    """The host cluster's adapter (for tests that need one cluster, not every version)."""
    adapter = build_adapter(load_clusters(CLUSTERS_FILE)[CLUSTER], "ssh")
    yield adapter
    await adapter.close()


@pytest.fixture(params=versions())
def slurm_version(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def portal(
    sessionmaker: async_sessionmaker[AsyncSession], slurm_version: str
) -> AsyncIterator[Portal]:
    opened = await open_portal(sessionmaker, slurm_version)
    yield opened
    await close_portal(opened)


async def open_portal(
    sessionmaker: async_sessionmaker[AsyncSession],
    version: str,
    login: str = "alice",
    *,
    transport: Transport = "ssh",
    queue_reads: Transport = "ssh",
) -> Portal:
    """A portal on ``version``'s cluster whose user ``login`` is alice there, in physics."""
    config = dataclasses.replace(cluster_config(version), queue_reads=queue_reads)
    adapter = build_adapter(config, transport)
    cluster = config.name
    async with sessionmaker() as session:
        project = await make_project(session, "Physics", slurm_account="physics", cluster=cluster)
        alice = await make_user(session, login, cluster_username="alice", cluster=cluster)
        await add_member(session, alice, project)
        await session.commit()
        actor = await as_actor(session, alice)
    service = JobService(sessionmaker, {cluster: adapter})
    return Portal(sessionmaker, adapter, service, actor, project, version, cluster)


async def close_portal(portal: Portal) -> None:
    # The cluster is shared: a failed test must not leave its jobs holding the two CPUs.
    async with portal.sessionmaker() as cleanup:
        ids = list(
            await cleanup.scalars(
                select(Job.slurm_job_id).where(
                    Job.cluster == portal.cluster, Job.slurm_job_id.is_not(None)
                )
            )
        )
    if ids:
        run_on(portal.version, ["scancel", *[str(i) for i in ids]], check=False)
    await portal.adapter.close()


def sacct_ids_named(version: str, name: str) -> list[str]:
    """Allocation ids of every job called ``name`` in Slurm's accounting."""
    argv = ["sacct", "-X", "-n", "-P", "-a", "-S", "now-1hours", f"--name={name}", "-o", "JobID"]
    output = run_on(version, argv, check=True).stdout
    return [line for line in output.split() if line]


async def wait_for_sacct_ids_named(version: str, name: str, timeout: float = 30) -> list[str]:
    """Accounting lists a job by name a little after ``sacct -j`` already shows it."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not (found := sacct_ids_named(version, name)) and loop.time() < deadline:
        await asyncio.sleep(1)
    return found


def squeue_comment(version: str, slurm_id: str) -> str:
    argv = ["squeue", "-h", "-a", "-t", "all", "-j", slurm_id, "-O", "Comment:100"]
    return run_on(version, argv, check=True).stdout.strip()
