"""The job list through slurmrestd on every Slurm version: slurmctld is asked whether any job
changed since the list kept, in the form each API takes, and no change is ever missed."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest

from app.scheduler.config import ClusterConfig
from app.scheduler.slurm.rest import RestTransport
from app.scheduler.slurm.rest_jobs import RestJobs
from app.scheduler.slurm.rest_versions import update_time_form
from app.scheduler.states import JobState
from app.scheduler.types import JobInfo, JobSpec
from tests.slurm_versions import release

pytestmark = pytest.mark.slurm

# Per release, the newest API the library speaks and the oldest one offered: v0.0.38 cannot
# ask, v0.0.40 asks with "now-N", v0.0.42 and later with the list's own last_update.
APIS = {"22.05": ("v0.0.38",), "24.11": ("v0.0.42", "v0.0.40"), "26.05": ("v0.0.45", "v0.0.42")}
QUIET_WITHIN = 120.0


@pytest.fixture(params=[0, 1], ids=["newest", "oldest"])
async def rest_jobs(
    request: pytest.FixtureRequest, cluster: ClusterConfig, slurm_version: str
) -> AsyncIterator[RestJobs]:
    apis = APIS[release(slurm_version)]
    transport = RestTransport(cluster, version=apis[min(request.param, len(apis) - 1)])
    yield RestJobs(transport)
    await transport.close()


def held(name: str) -> JobSpec:
    return JobSpec(
        script="#!/bin/bash\ntrue\n",
        name=name,
        account="physics",
        time_limit=5,
        working_dir="/home/alice",
        stdout="/dev/null",
        hold=True,
    )


def listed(jobs: list[JobInfo], job_id: str) -> JobInfo:
    found = [job for job in jobs if job.job_id == job_id]
    assert len(found) == 1, [job.job_id for job in jobs]
    return found[0]


async def test_a_submission_and_a_cancel_after_a_kept_list_are_read(rest_jobs: RestJobs) -> None:
    await rest_jobs.queue()
    job_id = await rest_jobs.submit(held("rest-listing"), "alice")
    try:
        assert listed(await rest_jobs.queue(), job_id).state is JobState.QUEUED_HELD
    finally:
        await rest_jobs.cancel([job_id], "alice")
    assert listed(await rest_jobs.queue(), job_id).state is JobState.CANCELLED


async def test_a_quiet_cluster_answers_that_nothing_changed(rest_jobs: RestJobs) -> None:
    version = await rest_jobs.transport.version()
    kept = await rest_jobs.queue()
    if update_time_form(version) is None:
        for _ in range(3):
            await rest_jobs.queue()
        assert rest_jobs.listing.unchanged_answers == 0
        return
    end = time.monotonic() + QUIET_WITHIN
    while rest_jobs.listing.unchanged_answers == 0 and time.monotonic() < end:
        await asyncio.sleep(1)
        previous, kept = kept, await rest_jobs.queue()
    # Other tests' jobs may still end or leave; within two minutes the cluster falls quiet.
    assert rest_jobs.listing.unchanged_answers == 1, version
    assert kept == previous
