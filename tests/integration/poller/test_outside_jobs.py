"""Jobs a mapped user submitted with plain sbatch appear in the portal from the same cycle."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models.jobs import Job, JobEvent
from app.models.projects import Project
from app.models.users import User
from app.poller import outside_store
from app.poller.cycle import poll_cluster_once
from app.scheduler.fake import FakeScheduler
from app.scheduler.states import JobState
from app.scheduler.types import JobInfo, JobSpec
from tests.factories import add_member, make_job, make_project, make_user

# The portability tier: these also run on SQLite (ADR 0018).
pytestmark = pytest.mark.sqlite

CLUSTER = "testcluster"
Maker = async_sessionmaker[AsyncSession]


def spec(name: str, account: str = "physics") -> JobSpec:
    return JobSpec(
        script="#!/bin/bash\nsleep 60\n",
        name=name,
        account=account,
        stdout="/home/alice/outside/%j.out",
    )


async def _people(sessionmaker: Maker) -> int:
    async with sessionmaker() as session:
        alice = await make_user(session, "alice", cluster_username="alice", cluster=CLUSTER)
        physics = await make_project(session, "Physics", slurm_account="physics", cluster=CLUSTER)
        await add_member(session, alice, physics)
        await session.commit()
        return alice.id


async def _portal_row(sessionmaker: Maker, state: str) -> Job:
    """Alice's portal submission in ``state``, with no Slurm id recorded."""
    alice_id = await _people(sessionmaker)
    async with sessionmaker() as session:
        alice = await session.get(User, alice_id)
        physics = await session.scalar(select(Project))
        assert alice is not None and physics is not None
        job = await make_job(session, alice, physics, state=state)
        await session.commit()
    return job


async def _rows(sessionmaker: Maker) -> list[Job]:
    async with sessionmaker() as session:
        return list(await session.scalars(select(Job).order_by(Job.id)))


async def test_a_mapped_users_own_sbatch_job_is_recorded_once_and_tracked_to_its_end(
    sessionmaker: Maker,
) -> None:
    alice_id = await _people(sessionmaker)
    fake = FakeScheduler(
        accounts={"alice": ["physics", "other"], "zoe": ["physics"]}, keeps_ended_jobs=True
    )
    mine = await fake.submit(spec("by-hand"), "alice")
    await fake.submit(spec("unmapped-user"), "zoe")
    await fake.submit(spec("unknown-account", "other"), "alice")

    first = await poll_cluster_once(sessionmaker, CLUSTER, fake)
    await poll_cluster_once(sessionmaker, CLUSTER, fake)
    [row] = await _rows(sessionmaker)

    assert first.calls == 1  # the queue call the cycle makes anyway
    assert (row.slurm_job_id, row.name, row.owner_user_id) == (mine, "by-hand", alice_id)
    assert (row.state, row.submitted_outside, row.script) == ("pending", True, "")
    assert row.stdout_path == "/home/alice/outside/%j.out"
    async with sessionmaker() as session:
        event = await session.scalar(select(JobEvent).where(JobEvent.job_id == row.id))
    assert event is not None and event.reason == "submitted outside the portal"

    fake.start(mine)
    await poll_cluster_once(sessionmaker, CLUSTER, fake)
    fake.finish(mine, exit_code=3)
    for _ in range(3):  # ended: no longer tracked, still in the queue; never recorded again
        await poll_cluster_once(sessionmaker, CLUSTER, fake)
    [ended] = await _rows(sessionmaker)
    assert (ended.id, ended.state) == (row.id, "failed")


async def test_a_portal_submission_is_never_taken_for_an_outside_job(
    sessionmaker: Maker,
) -> None:
    fake = FakeScheduler(accounts={"alice": ["physics"]})
    job = await _portal_row(sessionmaker, "submitting")
    # sbatch answered, the submitter has not recorded the id yet: the comment is the row's.
    await fake.submit(replace(spec("ours"), comment=job.uuid), "alice")
    await poll_cluster_once(sessionmaker, CLUSTER, fake)
    rows = await _rows(sessionmaker)
    assert [(r.id, r.submitted_outside) for r in rows] == [(job.id, False)]


async def test_a_job_that_ended_between_two_cycles_gets_its_end_from_accounting(
    sessionmaker: Maker,
) -> None:
    await _people(sessionmaker)
    fake = FakeScheduler(accounts={"alice": ["physics"]}, keeps_ended_jobs=True)
    quick = await fake.submit(spec("quick"), "alice")
    fake.start(quick)
    fake.finish(quick, exit_code=3)

    await poll_cluster_once(sessionmaker, CLUSTER, fake)
    [seen] = await _rows(sessionmaker)
    await poll_cluster_once(sessionmaker, CLUSTER, fake)
    [ended] = await _rows(sessionmaker)

    assert (seen.state, seen.exit_code) == ("completing", None)
    assert (ended.state, ended.exit_code, ended.submitted_outside) == ("failed", 3, True)


async def test_a_portal_job_whose_row_ended_is_not_recorded_again_from_its_comment(
    sessionmaker: Maker,
) -> None:
    fake = FakeScheduler(accounts={"alice": ["physics"]})
    job = await _portal_row(sessionmaker, "submit_failed")
    await fake.submit(replace(spec("ours"), comment=job.uuid), "alice")
    await poll_cluster_once(sessionmaker, CLUSTER, fake)
    assert [r.id for r in await _rows(sessionmaker)] == [job.id]


def _task(index: str, state: JobState, raw: str, **more: Any) -> JobInfo:
    more.setdefault("stdout_path", f"/home/alice/sweep-{raw}.out")
    return JobInfo(
        job_id=f"700_{index}",
        raw_job_id=raw,
        array_job_id="700",
        array_task_id=index,
        state=state,
        native_state=state.name,
        user="alice",
        account="physics",
        name="sweep",
        submit_time=datetime.now(UTC),
        **more,
    )


async def test_an_array_submitted_by_hand_gets_one_row_and_a_row_per_task_to_its_end(
    sessionmaker: Maker,
) -> None:
    alice_id = await _people(sessionmaker)
    fake = FakeScheduler(accounts={"alice": ["physics"]})
    rest = _task("[3-4]", JobState.QUEUED, "700", stdout_path="/home/alice/sweep-%j.out")
    fake.jobs = {
        "700_1": _task("1", JobState.RUNNING, "701"),
        "700_2": _task("2", JobState.RUNNING, "702"),
        rest.job_id: rest,
    }
    await poll_cluster_once(sessionmaker, CLUSTER, fake)
    [array] = await _rows(sessionmaker)
    await poll_cluster_once(sessionmaker, CLUSTER, fake)
    started = await _rows(sessionmaker)

    assert (array.slurm_job_id, array.array_spec, array.owner_user_id) == (
        "700",
        "1-2,3-4",
        alice_id,
    )
    assert (array.state, array.submitted_outside, array.array_parent_id) == ("running", True, None)
    assert array.stdout_path == "/home/alice/sweep-%j.out"
    assert [(t.slurm_job_id, t.slurm_raw_id, t.stdout_path) for t in started[1:]] == [
        ("700_1", "701", "/home/alice/sweep-701.out"),
        ("700_2", "702", "/home/alice/sweep-702.out"),
    ]

    ended = {"exit_code": 0, "end_time": datetime.now(UTC), "total_cpu_seconds": 4.0}
    fake.jobs = {
        "700_1": _task("1", JobState.COMPLETED, "701", **ended),
        "700_2": _task("2", JobState.COMPLETED, "702", **ended),
        "700_3": _task("3", JobState.FAILED, "703", **ended | {"exit_code": 2}),
        "700_4": _task("4", JobState.COMPLETED, "700", **ended),
    }
    for _ in range(3):
        await poll_cluster_once(sessionmaker, CLUSTER, fake)
    [parent, *tasks] = await _rows(sessionmaker)

    assert (parent.id, parent.state, parent.exit_code) == (array.id, "failed", 2)
    assert [(t.array_task_id, t.state, t.slurm_raw_id, t.submitted_outside) for t in tasks] == [
        (1, "completed", "701", True),
        (2, "completed", "702", True),
        (3, "failed", "703", True),
        (4, "completed", "700", True),
    ]


async def test_outside_jobs_found_together_are_recorded_in_chunks_each_once(
    sessionmaker: Maker, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(outside_store, "RECORD_CHUNK", 2)
    await _people(sessionmaker)
    fake = FakeScheduler(accounts={"alice": ["physics"]})
    submitted = [await fake.submit(spec(f"by-hand-{n}"), "alice") for n in range(5)]
    for _ in range(2):
        await poll_cluster_once(sessionmaker, CLUSTER, fake)
    rows = await _rows(sessionmaker)
    assert [(r.slurm_job_id, r.name) for r in rows] == [
        (slurm_id, f"by-hand-{n}") for n, slurm_id in enumerate(submitted)
    ]
    async with sessionmaker() as session:
        events = list(await session.scalars(select(JobEvent.job_id).order_by(JobEvent.job_id)))
    assert events == [r.id for r in rows]
