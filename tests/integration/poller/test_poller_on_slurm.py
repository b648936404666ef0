"""Poll cycles against the real local Slurm clusters, on PostgreSQL (ADR 0018)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import uuid
from dataclasses import replace
from datetime import timedelta

import pytest
from sqlalchemy import select

from app.errors import NotFound
from app.jobs import states, submission
from app.jobs.logs import read_log
from app.models.clusters import ClusterStatus
from app.models.jobs import Job, JobEvent
from app.poller.cycle import poll_cluster_once
from app.poller.reconcile import Grace
from tests.integration.poller.conftest import Portal, squeue_comment, wait_for_sacct_ids_named
from tests.slurm_versions import DEV_CLUSTER, run_on

pytestmark = pytest.mark.slurm


async def event_states(portal: Portal, job_id: int) -> list[str]:
    async with portal.sessionmaker() as session:
        rows = await session.scalars(
            select(JobEvent.to_state).where(JobEvent.job_id == job_id).order_by(JobEvent.id)
        )
        return list(rows)


async def test_job_goes_submitting_pending_running_completed(portal: Portal) -> None:
    job = await portal.service.submit(portal.alice, portal.request("#!/bin/bash\nsleep 4\n"))
    assert job.state == "pending"
    await portal.poll_until(job.id, lambda row: row.state == "running", timeout=60)
    done = await portal.poll_until(job.id, lambda row: states.is_terminal(row.state), 60)
    assert (done.state, done.exit_code) == ("completed", 0)
    assert done.started_at is not None and done.ended_at is not None
    assert done.elapsed_seconds is not None and done.elapsed_seconds >= 4
    # Slurm's COMPLETING (epilog running) lasts a moment; a cycle may or may not land in it.
    assert await event_states(portal, job.id) in (
        ["submitting", "pending", "running", "completed"],
        ["submitting", "pending", "running", "completing", "completed"],
    )


async def test_exit_3_is_failed_with_code_3(portal: Portal) -> None:
    job = await portal.service.submit(portal.alice, portal.request("#!/bin/bash\nexit 3\n"))
    done = await portal.poll_until(job.id, lambda row: states.is_terminal(row.state), 60)
    assert (done.state, done.exit_code, done.exit_signal) == ("failed", 3, None)


async def test_cancelled_job_ends_cancelled(portal: Portal) -> None:
    job = await portal.service.submit(portal.alice, portal.request("#!/bin/bash\nsleep 120\n"))
    await portal.poll_until(job.id, lambda row: row.state == "running", timeout=60)
    await portal.service.cancel(portal.alice, job.id)
    done = await portal.poll_until(job.id, lambda row: states.is_terminal(row.state), 60)
    assert done.state == "cancelled"


async def test_lost_phase_c_write_is_attached_by_uuid_without_duplicate(
    portal: Portal, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"crash-{uuid.uuid4().hex[:10]}"

    async def crash(*args: object) -> None:
        raise RuntimeError("process died after sbatch answered")

    monkeypatch.setattr(submission, "record_submission", crash)
    with pytest.raises(RuntimeError):
        await portal.service.submit(
            portal.alice, portal.request("#!/bin/bash\nsleep 2\n", name=name)
        )
    [job_id] = [row.id for row in await all_jobs(portal)]
    assert (await portal.job(job_id)).state == "submitting"
    attached = await portal.poll_until(
        job_id, lambda row: row.slurm_job_id is not None, 30, Grace(submit=timedelta(0))
    )
    assert squeue_comment(portal.version, attached.slurm_job_id or "") == attached.uuid
    done = await portal.poll_until(job_id, lambda row: states.is_terminal(row.state), 60)
    assert done.state == "completed"
    assert await wait_for_sacct_ids_named(portal.version, name) == [attached.slurm_job_id]


async def all_jobs(portal: Portal) -> list[Job]:
    async with portal.sessionmaker() as session:
        return list(await session.scalars(select(Job)))


@pytest.mark.slow
async def test_timeout_and_aged_out_job_get_true_end_states(portal: Portal) -> None:
    """Both minute-scale scenarios in one test, so the version pays Slurm's clock once.

    Slurm's clock sets the wait (a one-minute limit checked every 30 s, MinJobAge); the
    versions run side by side, each in its own pytest-xdist group, so the suite pays it once.
    """
    # The quick job first: a time-limited job queued ahead of it could hold its CPU a minute.
    quick = await portal.service.submit(portal.alice, portal.request("#!/bin/bash\nexit 7\n"))
    sleeper = "#!/bin/bash\nsleep 600\n"
    limited = await portal.service.submit(
        portal.alice, portal.request(sleeper, time_limit_minutes=1)
    )
    await _true_end_states(portal, quick, limited)


async def _true_end_states(portal: Portal, quick: Job, limited: Job) -> None:
    where = f"Slurm {portal.version} on {portal.sessionmaker.kw['bind'].dialect.name}"
    await wait_until_gone_from_squeue(portal.version, quick.slurm_job_id or "", timeout=240)
    aged = await portal.poll_until(quick.id, lambda row: states.is_terminal(row.state), 10)
    assert (aged.state, aged.exit_code) == ("failed", 7), where
    done = await portal.poll_until(limited.id, lambda row: states.is_terminal(row.state), 150)
    assert done.state == "timeout", where


async def wait_until_gone_from_squeue(version: str, slurm_id: str, timeout: float) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        argv = ["squeue", "-h", "-a", "-t", "all", "-j", slurm_id, "-o", "%i"]
        # In a thread: the other pairs' poll cycles run meanwhile.
        listed = (await asyncio.to_thread(run_on, version, argv, check=False)).stdout
        if slurm_id not in listed.split():
            return
        await asyncio.sleep(2)
    pytest.fail(f"job {slurm_id} still in squeue after {timeout} s")


def dev_cluster(version: str, *args: str) -> None:
    # The start-up smoke job would wait behind this test's own job on the two-CPU node.
    done = subprocess.run(
        [str(DEV_CLUSTER), *args, "--version", version],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        env=os.environ | {"SKIP_SMOKE": "1"},
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


async def stop_controller(version: str) -> None:
    """Take slurmctld down; ``dev_cluster(version, "up")`` brings it back."""
    # `scontrol shutdown slurmctld` stops only the controller, leaving slurmd and slurmdbd up.
    run_on(version, ["scontrol", "shutdown", "slurmctld"], check=True)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 30
    while loop.time() < deadline:
        ping = run_on(version, ["scontrol", "ping"], check=False)
        if "DOWN" in ping.stdout:
            return
        await asyncio.sleep(0.5)
    pytest.fail("slurmctld did not stop")


async def poll_until_cluster_answers(portal: Portal, timeout: float) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not (await poll_cluster_once(portal.sessionmaker, portal.cluster, portal.adapter)).is_ok:
        if loop.time() > deadline:
            pytest.fail(f"cluster still failing after {timeout} s")
        await asyncio.sleep(1)


async def cluster_status(portal: Portal) -> ClusterStatus:
    async with portal.sessionmaker() as session:
        status = await session.get(ClusterStatus, portal.cluster)
        assert status is not None
        return status


@pytest.mark.slow
async def test_unreachable_cluster_is_recorded_and_no_job_turns_terminal(portal: Portal) -> None:
    job = await portal.service.submit(portal.alice, portal.request("#!/bin/bash\nsleep 120\n"))
    before = await portal.poll_until(job.id, lambda row: row.last_seen_at is not None, 30)
    try:
        await stop_controller(portal.version)
        outage = await poll_cluster_once(portal.sessionmaker, portal.cluster, portal.adapter)
        assert not outage.is_ok
        assert (await portal.job(job.id)).state == before.state
        status = await cluster_status(portal)
        assert status.consecutive_failures >= 1 and status.last_error
    finally:
        dev_cluster(portal.version, "up")
    await poll_until_cluster_answers(portal, timeout=60)
    assert not states.is_terminal((await portal.job(job.id)).state)
    status = await cluster_status(portal)
    assert (status.consecutive_failures, status.last_error) == (0, None)


async def test_array_parent_and_task_rows_follow_slurm(portal: Portal) -> None:
    parent = await portal.service.submit(
        portal.alice, portal.request("#!/bin/bash\nexit $SLURM_ARRAY_TASK_ID\n", array_spec="0-2")
    )
    done = await portal.poll_until(parent.id, lambda row: states.is_terminal(row.state), 90)
    async with portal.sessionmaker() as session:
        tasks = list(
            await session.scalars(
                select(Job).where(Job.array_parent_id == parent.id).order_by(Job.array_task_id)
            )
        )
    assert [(t.slurm_job_id, t.state, t.exit_code) for t in tasks] == [
        (f"{parent.slurm_job_id}_0", "completed", 0),
        (f"{parent.slurm_job_id}_1", "failed", 1),
        (f"{parent.slurm_job_id}_2", "failed", 2),
    ]
    assert (done.state, done.exit_code) == ("failed", 2)


async def test_an_array_keeps_slurms_submit_time_and_partition_and_each_task_its_own_output(
    portal: Portal,
) -> None:
    script = "#!/bin/bash\necho task $SLURM_ARRAY_TASK_ID\n"
    request = replace(
        portal.request(script, array_spec="1-2"), stdout_path="/scratch/alice/arr-%A_%a.out"
    )
    parent = await portal.service.submit(portal.alice, request)
    done = await portal.poll_until(parent.id, lambda row: states.is_terminal(row.state), 90)
    async with portal.sessionmaker() as session:
        tasks = list(await session.scalars(select(Job).where(Job.array_parent_id == parent.id)))
    outputs = [
        await read_log(portal.sessionmaker, {portal.cluster: portal.adapter}, portal.alice, t.id)
        for t in sorted(tasks, key=lambda t: t.array_task_id or 0)
    ]

    # No partition was asked for: Slurm chose the cluster's default, and said so.
    assert (done.partition, done.chosen_partition) == (None, "debug")
    assert done.submitted_at is not None and all(t.submitted_at for t in tasks)
    assert [t.chosen_partition for t in tasks] == ["debug", "debug"]
    assert [chunk.text.strip() for chunk in outputs] == ["task 1", "task 2"]
    with pytest.raises(NotFound):
        await read_log(portal.sessionmaker, {portal.cluster: portal.adapter}, portal.alice, done.id)


async def test_a_job_that_asked_for_no_partition_keeps_the_one_slurm_chose(portal: Portal) -> None:
    job = await portal.service.submit(portal.alice, portal.request("#!/bin/bash\ntrue\n"))
    done = await portal.poll_until(job.id, lambda row: states.is_terminal(row.state), 60)
    assert (done.state, done.partition, done.chosen_partition) == ("completed", None, "debug")
