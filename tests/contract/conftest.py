"""Adapters on the real development clusters: every Slurm version, every transport, the fake.

The versions come from ``PORTAL_TEST_SLURM_VERSIONS`` (see ``tests/slurm_versions.py``);
``scripts/test`` brings every supported version up and tests them all.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import re
import time
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from app.scheduler.base import SchedulerAdapter
from app.scheduler.config import ClusterConfig
from app.scheduler.errors import SchedulerError
from app.scheduler.fake import FakeScheduler
from app.scheduler.registry import build_adapter
from app.scheduler.types import JobInfo
from tests.slurm_versions import cluster_config, versions


@pytest.fixture(scope="module", params=versions())
def slurm_version(request: pytest.FixtureRequest) -> str:
    """The Slurm version under test (module scope: tests are grouped by version)."""
    return str(request.param)


@pytest.fixture
def cluster(slurm_version: str) -> ClusterConfig:
    """That version's cluster configuration."""
    return cluster_config(slurm_version)


@pytest.fixture(scope="module")
async def ssh_adapter(slurm_version: str) -> AsyncIterator[SchedulerAdapter]:
    adapter = build_adapter(cluster_config(slurm_version), "ssh")
    yield adapter
    await adapter.close()


@pytest.fixture(scope="module")
async def rest_adapter(slurm_version: str) -> AsyncIterator[SchedulerAdapter]:
    config = cluster_config(slurm_version)
    if not config.rest_url:
        pytest.fail("the development cluster has no rest_url")
    # The queue listed through slurmrestd too: the SSH adapter covers squeue.
    adapter = build_adapter(dataclasses.replace(config, queue_reads="rest"), "rest")
    yield adapter
    await adapter.close()


@pytest.fixture(params=["ssh", "rest"])
def adapter(request: pytest.FixtureRequest, slurm_version: str) -> SchedulerAdapter:
    """The adapter under test, once per transport."""
    return request.getfixturevalue(f"{request.param}_adapter")


@pytest.fixture(params=["ssh", "rest", "fake"])
def any_adapter(request: pytest.FixtureRequest, slurm_version: str) -> SchedulerAdapter:
    """Like ``adapter`` plus the in-memory fake, for rules the fake also models."""
    if request.param == "fake":
        return FakeScheduler(accounts={"alice": ["physics"], "bob": ["chemistry"]})
    return request.getfixturevalue(f"{request.param}_adapter")


def run_dir_for(label: str) -> str:
    """A fresh directory path under alice's home (not yet created: preflight creates it)."""
    clean = re.sub(r"[^A-Za-z0-9_-]", "-", label)[:48]
    return f"/home/alice/portal-contract/{clean}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def run_dir(request: pytest.FixtureRequest) -> str:
    """A fresh directory path for this test's logs (not yet created)."""
    return run_dir_for(request.node.name)


async def find_job(adapter: SchedulerAdapter, job_id: str) -> list[JobInfo]:
    """The job (or its array tasks) from the queue, falling back to accounting."""
    master = job_id.split("_", 1)[0]

    def matches(job: JobInfo) -> bool:
        return job.job_id == job_id or job.array_job_id == master

    found = [job for job in await adapter.queue() if matches(job)]
    if found and all(not job.state.is_terminal for job in found):
        return found
    accounted = [job for job in await adapter.accounting([master]) if matches(job)]
    return accounted or found


async def wait_for_job(
    adapter: SchedulerAdapter,
    job_id: str,
    predicate: Callable[[list[JobInfo]], bool],
    deadline: float = 150.0,
) -> list[JobInfo]:
    """Poll until ``predicate`` holds for the job's records; fail after ``deadline`` s."""
    end = time.monotonic() + deadline
    records: list[JobInfo] = []
    while time.monotonic() < end:
        records = await find_job(adapter, job_id)
        if records and predicate(records):
            return records
        await asyncio.sleep(0.5)
    states = [(r.job_id, r.state, r.reason) for r in records]
    raise AssertionError(f"job {job_id} did not reach the expected state; last seen {states}")


async def wait_for_accounting(
    adapter: SchedulerAdapter,
    job_id: str,
    predicate: Callable[[JobInfo], bool],
    deadline: float = 60.0,
) -> list[JobInfo]:
    """Poll accounting alone (slurmdbd learns of a job a moment after slurmctld)."""
    end = time.monotonic() + deadline
    records: list[JobInfo] = []
    while time.monotonic() < end:
        records = [j for j in await adapter.accounting([job_id]) if j.job_id == job_id]
        if records and all(predicate(r) for r in records):
            return records
        await asyncio.sleep(0.5)
    states = [(r.job_id, r.native_state, r.reason) for r in records]
    raise AssertionError(f"job {job_id} not as expected in accounting; last seen {states}")


@pytest.fixture
def wait_for() -> Callable[..., Any]:
    """``await wait_for(adapter, job_id, predicate, deadline=150)``: poll with a deadline."""
    return wait_for_job


@pytest.fixture
async def cleanup() -> AsyncIterator[list[tuple[SchedulerAdapter, str, str]]]:
    """Register (adapter, job id, owner); leftover jobs are cancelled after the test."""
    jobs: list[tuple[SchedulerAdapter, str, str]] = []
    yield jobs
    for adapter, job_id, owner in jobs:
        with contextlib.suppress(SchedulerError):
            await adapter.cancel([job_id], owner)
