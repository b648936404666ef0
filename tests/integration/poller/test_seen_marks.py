"""What a poll cycle writes for jobs Slurm lists unchanged, and for none when it cannot ask."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.jobs import tracking
from app.models.jobs import Job, JobEvent
from app.models.projects import Project
from app.models.users import User
from app.poller.cycle import poll_cluster_once
from app.scheduler.fake import FakeScheduler
from app.scheduler.types import JobInfo, JobState
from tests.factories import make_job, make_project, make_user

# The portability tier: these also run on SQLite (ADR 0018).
pytestmark = pytest.mark.sqlite

CLUSTER = "testcluster"
NOW = datetime(2026, 11, 27, 9, 0, tzinfo=UTC)


async def _alice_in_physics(session: AsyncSession) -> tuple[User, Project]:
    owner = await make_user(session, "alice")
    return owner, await make_project(session, "Physics", slurm_account="physics")


def _queued(job_id: str, reason: str) -> JobInfo:
    return JobInfo(
        job_id=job_id,
        state=JobState.QUEUED,
        native_state="PENDING",
        reason=reason,
        submit_time=NOW - timedelta(hours=1),
        user="alice",
        account="physics",
    )


async def test_unchanged_jobs_get_only_a_seen_mark_and_changed_ones_their_news(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    long_ago, just_now = NOW - timedelta(minutes=2), NOW - timedelta(seconds=10)
    async with sessionmaker() as session:
        owner, project = await _alice_in_physics(session)
        seen_long_ago = [
            await make_job(session, owner, project, slurm_job_id=str(n), reason="Priority")
            for n in range(1, 301)
        ]
        for job in seen_long_ago:
            job.last_seen_at = long_ago
        moved = await make_job(
            session, owner, project, slurm_job_id="5000", reason="Priority", last_seen_at=long_ago
        )
        recent = await make_job(
            session, owner, project, slurm_job_id="5001", reason="Priority", last_seen_at=just_now
        )
        await session.commit()
        ids = [job.id for job in seen_long_ago]
    fake = FakeScheduler()
    for job_id in [*(str(n) for n in range(1, 301)), "5001"]:
        fake.jobs[job_id] = _queued(job_id, "Priority")
    fake.jobs["5000"] = _queued("5000", "Resources")

    result = await poll_cluster_once(sessionmaker, CLUSTER, fake, now=NOW)

    assert result.is_ok and result.transitions == 301
    async with sessionmaker() as session:
        marked = (await session.scalars(select(Job).where(Job.id.in_(ids)))).all()
        assert {(job.state, job.reason, job.last_seen_at, job.submitted_at) for job in marked} == {
            ("pending", "Priority", NOW, None)  # only the mark: nothing else was news
        }
        news = await session.get(Job, moved.id)
        assert news is not None and (news.reason, news.last_seen_at) == ("Resources", NOW)
        assert news.submitted_at == NOW - timedelta(hours=1)  # the full record, not only the mark
        untouched = await session.get(Job, recent.id)
        assert untouched is not None and untouched.last_seen_at == just_now
        assert await session.scalar(select(func.count()).select_from(JobEvent)) == 0


async def test_an_unreachable_queue_changes_no_job_and_still_counts_the_tracked_rows(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    async with sessionmaker() as session:
        owner, project = await _alice_in_physics(session)
        job = await make_job(session, owner, project, slurm_job_id="7", state="running")
        await session.commit()
    fake = FakeScheduler()
    fake.is_up = False

    result = await poll_cluster_once(sessionmaker, CLUSTER, fake, now=NOW)

    assert (result.is_ok, result.tracked, result.calls, result.transitions) == (False, 1, 1, 0)
    assert result.error is not None and result.error.startswith("SchedulerUnavailable")
    async with sessionmaker() as session:
        row = await session.get(Job, job.id)
        assert row is not None and (row.state, row.last_seen_at) == ("running", None)


async def test_news_written_without_loading_skips_a_row_whose_state_moved_meanwhile(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    async with sessionmaker() as session:
        owner, project = await _alice_in_physics(session)
        waiting = await make_job(session, owner, project, slurm_job_id="1", reason="Priority")
        moved = await make_job(session, owner, project, slurm_job_id="2", state="running")
        await session.commit()
    estimate = NOW + timedelta(minutes=3)
    news = {"reason": "Resources", "expected_start_at": estimate, "last_seen_at": NOW}
    async with sessionmaker() as session:
        await tracking.update_keeping_state(
            session, [(waiting.id, "pending", news), (moved.id, "pending", news)]
        )
        await session.commit()
    async with sessionmaker() as session:
        written = await session.get(Job, waiting.id)
        left = await session.get(Job, moved.id)
    assert written is not None and left is not None
    assert (written.reason, written.expected_start_at, written.last_seen_at) == (
        "Resources",
        estimate,
        NOW,
    )
    assert (left.state, left.reason, left.last_seen_at) == ("running", None, None)
