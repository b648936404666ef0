"""Jobs a mapped user submitted with plain sbatch appear in the portal from the same cycle."""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models import Job, JobEvent, Project, User
from app.poller.cycle import poll_cluster_once
from app.scheduler.fake import FakeScheduler
from app.scheduler.types import JobSpec
from tests.factories import add_member, make_job, make_project, make_user

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
