"""Adapters on the real development cluster, one per transport (plus the fake).

The cluster file comes from ``PORTAL_CLUSTERS_FILE`` (default
``/var/lib/hpcportal-dev/clusters.toml``, written by ``scripts/dev-cluster up``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import time
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from app.scheduler.base import SchedulerAdapter
from app.scheduler.config import ClusterConfig, load_clusters
from app.scheduler.errors import SchedulerError
from app.scheduler.fake import FakeScheduler
from app.scheduler.registry import build_adapter
from app.scheduler.types import JobInfo

CLUSTERS_FILE = Path(os.environ.get("PORTAL_CLUSTERS_FILE", "/var/lib/hpcportal-dev/clusters.toml"))


def cluster_config() -> ClusterConfig:
    if not CLUSTERS_FILE.exists():
        pytest.skip(f"{CLUSTERS_FILE} missing: run scripts/dev-cluster up (scripts/test does)")
    return next(iter(load_clusters(CLUSTERS_FILE).values()))


@pytest.fixture
def cluster() -> ClusterConfig:
    """The development cluster's configuration (skips when the file is missing)."""
    return cluster_config()


@pytest.fixture(scope="module")
async def ssh_adapter() -> AsyncIterator[SchedulerAdapter]:
    adapter = build_adapter(cluster_config(), "ssh")
    yield adapter
    await adapter.close()


@pytest.fixture(scope="module")
async def rest_adapter() -> AsyncIterator[SchedulerAdapter]:
    config = cluster_config()
    if not config.rest_url:
        pytest.skip("cluster has no rest_url")
    adapter = build_adapter(config, "rest")
    yield adapter
    await adapter.close()


@pytest.fixture(params=["ssh", "rest"])
def adapter(request: pytest.FixtureRequest) -> SchedulerAdapter:
    """The adapter under test, once per transport."""
    return request.getfixturevalue(f"{request.param}_adapter")


@pytest.fixture(params=["ssh", "rest", "fake"])
def any_adapter(request: pytest.FixtureRequest) -> SchedulerAdapter:
    """Like ``adapter`` plus the in-memory fake, for rules the fake also models."""
    if request.param == "fake":
        return FakeScheduler(accounts={"alice": ["physics"], "bob": ["chemistry"]})
    return request.getfixturevalue(f"{request.param}_adapter")


@pytest.fixture
def run_dir(request: pytest.FixtureRequest) -> str:
    """A fresh directory path under alice's home for this test's logs (not yet created)."""
    label = re.sub(r"[^A-Za-z0-9_-]", "-", request.node.name)[:48]
    return f"/home/alice/portal-contract/{label}-{uuid.uuid4().hex[:8]}"


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
