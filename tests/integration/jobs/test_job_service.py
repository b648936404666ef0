"""The jobs service on both databases, with the in-memory scheduler standing in for Slurm."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from datetime import timedelta

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.errors import Conflict, Forbidden, NotFound, ServiceUnavailable, ValidationFailed
from app.jobs import listing, service, submission
from app.jobs.listing import ListQuery
from app.jobs.requests import JobRequest
from app.models.jobs import Job, JobEvent
from app.models.projects import Project
from app.models.users import User
from app.poller.cycle import poll_cluster_once
from app.poller.reconcile import Grace
from app.scheduler.errors import NotSent, PreflightFailed, RejectKind, SubmitRejected
from app.scheduler.fake import FakeScheduler
from tests.factories import add_member, as_actor, make_job, make_project, make_user

# The portability tier: these also run on SQLite (ADR 0018).
pytestmark = pytest.mark.sqlite

CLUSTER = "testcluster"
NO_WAIT = Grace(submit=timedelta(0))


@pytest.fixture
def fake() -> FakeScheduler:
    return FakeScheduler(accounts={"alice": ["physics"], "carol": ["physics"]})


@pytest.fixture
def jobs(sessionmaker: async_sessionmaker[AsyncSession], fake: FakeScheduler) -> service.JobService:
    return service.JobService(sessionmaker, {CLUSTER: fake})


async def physics(session: AsyncSession) -> tuple[User, User, User, Project]:
    project = await make_project(session, "Physics", slurm_account="physics")
    alice = await make_user(session, "alice", cluster_username="alice")
    carol = await make_user(session, "carol", cluster_username="carol")
    manager = await make_user(session, "mgr", cluster_username="mgr")
    await add_member(session, alice, project)
    await add_member(session, carol, project)
    await add_member(session, manager, project, role="manager")
    await session.commit()
    return alice, carol, manager, project


def request_for(project: Project, **fields: object) -> JobRequest:
    return JobRequest(project_id=project.id, script="#!/bin/bash\ntrue\n", name="t", **fields)  # type: ignore[arg-type]


async def test_submit_writes_row_first_then_records_slurm_id(
    session: AsyncSession, jobs: service.JobService, fake: FakeScheduler
) -> None:
    alice, _, _, project = await physics(session)
    job = await jobs.submit(await as_actor(session, alice), request_for(project))
    assert (job.state, job.slurm_job_id) == ("pending", "1000")
    assert fake.specs["1000"].comment == job.uuid
    assert fake.specs["1000"].account == "physics"
    events = await service.list_events(session, await as_actor(session, alice), job.id)
    assert [(e.from_state, e.to_state) for e in events] == [
        (None, "submitting"),
        ("submitting", "pending"),
    ]


class CountingSessions:
    """A sessionmaker that counts the sessions it opens."""

    def __init__(self, inner: async_sessionmaker[AsyncSession]) -> None:
        self.inner = inner
        self.opened = 0

    def __call__(self) -> AsyncSession:
        self.opened += 1
        return self.inner()


async def test_a_submission_opens_one_session_per_phase(
    session: AsyncSession, sessionmaker: async_sessionmaker[AsyncSession], fake: FakeScheduler
) -> None:
    alice, _, _, project = await physics(session)
    counting = CountingSessions(sessionmaker)
    jobs = service.JobService(counting, {CLUSTER: fake})  # type: ignore[arg-type]
    job = await jobs.submit(await as_actor(session, alice), request_for(project))
    # Validation, the submitting row, the Slurm id (which also returns the saved row).
    assert counting.opened == 3
    assert (job.state, job.slurm_job_id) == ("pending", "1000")


async def test_same_idempotency_key_returns_the_same_job(
    session: AsyncSession, jobs: service.JobService, fake: FakeScheduler
) -> None:
    alice, _, _, project = await physics(session)
    first = await jobs.submit(
        await as_actor(session, alice), request_for(project), idempotency_key="k1"
    )
    again = await jobs.submit(
        await as_actor(session, alice), request_for(project), idempotency_key="k1"
    )
    assert again.id == first.id
    assert len(fake.jobs) == 1


async def test_concurrent_retries_with_one_key_submit_once(
    session: AsyncSession, jobs: service.JobService, fake: FakeScheduler
) -> None:
    alice, _, _, project = await physics(session)
    actor = await as_actor(session, alice)
    results = await asyncio.gather(
        *(jobs.submit(actor, request_for(project), idempotency_key="k2") for _ in range(4))
    )
    assert len({job.id for job in results}) == 1
    assert len(fake.jobs) == 1
    assert await session.scalar(select(func.count()).select_from(Job)) == 1


def submits_raising(
    monkeypatch: pytest.MonkeyPatch, fake: FakeScheduler, error: Callable[[], Exception]
) -> None:
    """From now on the scheduler's submit raises a fresh ``error()``."""

    async def refuse(spec: object, as_user: str) -> str:
        raise error()

    monkeypatch.setattr(fake, "submit", refuse)


FOLDER = ("stdout", "directory /scratch/x cannot be created or is not writable")
REFUSALS: dict[str, tuple[Callable[[], Exception], dict[str, str], str | None, str]] = {
    # what the adapter raises, the fields and Slurm's words shown, the reason the row keeps
    "sbatch": (
        lambda: SubmitRejected(RejectKind.QOS_LIMIT, "Too big.", "raw"),
        {"submission": "Too big."},
        "raw",
        "Too big.",
    ),
    "folder": (lambda: PreflightFailed([FOLDER]), dict([FOLDER]), None, FOLDER[1]),
}


@pytest.mark.parametrize("refusal", sorted(REFUSALS))
async def test_a_refusal_at_submission_is_kept_shown_like_a_check_and_frees_its_key(
    session: AsyncSession,
    jobs: service.JobService,
    fake: FakeScheduler,
    monkeypatch: pytest.MonkeyPatch,
    refusal: str,
) -> None:
    alice, _, _, project = await physics(session)
    actor = await as_actor(session, alice)
    error, fields, raw, kept = REFUSALS[refusal]
    accept = fake.submit
    submits_raising(monkeypatch, fake, error)
    with pytest.raises(ValidationFailed) as caught:
        await jobs.submit(actor, request_for(project), idempotency_key="form-1")
    # Shown as a refused check is: plain words per field, Slurm's own beside them.
    assert (caught.value.fields, caught.value.raw) == (fields, raw)
    monkeypatch.setattr(fake, "submit", accept)
    corrected = await jobs.submit(actor, request_for(project), idempotency_key="form-1")
    assert (corrected.state, corrected.slurm_job_id) == ("pending", "1000")
    rows = await session.execute(select(Job.state, Job.submit_error).order_by(Job.id))
    assert [tuple(row) for row in rows] == [("submit_failed", kept), ("pending", None)]


async def test_a_submission_that_never_reached_the_cluster_is_settled_at_once(
    session: AsyncSession,
    jobs: service.JobService,
    fake: FakeScheduler,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    alice, _, _, project = await physics(session)
    submits_raising(monkeypatch, fake, lambda: NotSent("cannot reach login1: connection refused"))
    with pytest.raises(ServiceUnavailable):
        await jobs.submit(await as_actor(session, alice), request_for(project), "form-2")
    row = await session.scalar(select(Job))
    assert row is not None
    # Not left "submitting" for the poller to search for: nothing was sent.
    assert (row.state, row.submit_error, row.idempotency_key) == (
        "submit_failed",
        "the cluster could not be reached, so nothing was submitted",
        None,
    )


async def test_non_member_cannot_submit(session: AsyncSession, jobs: service.JobService) -> None:
    _, _, _, project = await physics(session)
    bob = await make_user(session, "bob", cluster_username="bob")
    await session.commit()
    with pytest.raises(NotFound):
        await jobs.submit(await as_actor(session, bob), request_for(project))


async def test_member_without_cluster_account_gets_a_validation_error(
    session: AsyncSession, jobs: service.JobService
) -> None:
    _, _, _, project = await physics(session)
    newcomer = await make_user(session, "newcomer")
    await add_member(session, newcomer, project)
    await session.commit()
    with pytest.raises(ValidationFailed):
        await jobs.submit(await as_actor(session, newcomer), request_for(project))


async def test_bad_values_are_refused_before_any_row_is_written(
    session: AsyncSession, jobs: service.JobService
) -> None:
    alice, _, _, project = await physics(session)
    with pytest.raises(ValidationFailed) as caught:
        await jobs.submit(
            await as_actor(session, alice), request_for(project, stdout_path="/etc/passwd")
        )
    assert "stdout" in caught.value.fields
    assert await session.scalar(select(func.count()).select_from(Job)) == 0


async def test_lost_phase_c_write_is_repaired_by_the_next_poll(
    sessionmaker: async_sessionmaker[AsyncSession],
    session: AsyncSession,
    jobs: service.JobService,
    fake: FakeScheduler,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    alice, _, _, project = await physics(session)

    async def crash(*args: object) -> None:
        raise RuntimeError("process died after sbatch answered")

    monkeypatch.setattr(submission, "record_submission", crash)
    with pytest.raises(RuntimeError):
        await jobs.submit(await as_actor(session, alice), request_for(project))
    await poll_cluster_once(sessionmaker, CLUSTER, fake, grace=NO_WAIT)
    row = await session.scalar(select(Job))
    assert row is not None
    assert (row.state, row.slurm_job_id) == ("pending", "1000")
    assert len(fake.jobs) == 1


async def test_a_submission_returns_its_row_as_saved_with_one_submitted_event(
    session: AsyncSession, jobs: service.JobService
) -> None:
    alice, _, _, project = await physics(session)
    job = await jobs.submit(await as_actor(session, alice), request_for(project))
    saved = await session.get(Job, job.id)
    assert saved is not None
    assert (job.state, job.slurm_job_id, job.submit_error, job.updated_at) == (
        saved.state,
        saved.slurm_job_id,
        saved.submit_error,
        saved.updated_at,
    )
    assert (saved.state, saved.slurm_job_id) == ("pending", "1000")
    reasons = await session.scalars(select(JobEvent.reason).where(JobEvent.job_id == job.id))
    assert list(reasons).count("submitted as Slurm job 1000") == 1


async def test_when_the_poller_attaches_the_job_first_the_submission_returns_the_pollers_row(
    sessionmaker: async_sessionmaker[AsyncSession],
    session: AsyncSession,
    jobs: service.JobService,
    fake: FakeScheduler,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    alice, _, _, project = await physics(session)
    submit = fake.submit

    async def submit_then_poll(*args: object) -> str:
        slurm_job_id = await submit(*args)  # type: ignore[arg-type]
        await poll_cluster_once(sessionmaker, CLUSTER, fake, grace=NO_WAIT)
        return slurm_job_id

    monkeypatch.setattr(fake, "submit", submit_then_poll)
    job = await jobs.submit(await as_actor(session, alice), request_for(project))
    assert (job.state, job.slurm_job_id) == ("pending", "1000")
    reasons = list(await session.scalars(select(JobEvent.reason).where(JobEvent.job_id == job.id)))
    assert "submitted as Slurm job 1000" not in reasons
    assert "found by its submission id" in reasons


async def test_manager_who_is_not_a_slurm_coordinator_gets_slurms_refusal(
    session: AsyncSession, jobs: service.JobService, fake: FakeScheduler
) -> None:
    alice, _, manager, project = await physics(session)
    job = await jobs.submit(await as_actor(session, alice), request_for(project))
    with pytest.raises(Forbidden, match="Slurm refused to let mgr cancel this job"):
        await jobs.cancel(await as_actor(session, manager), job.id)
    assert not fake.jobs["1000"].state.is_terminal


async def test_manager_who_coordinates_the_account_cancels_as_themself(
    session: AsyncSession, jobs: service.JobService, fake: FakeScheduler
) -> None:
    alice, _, manager, project = await physics(session)
    fake.coordinators[project.slurm_account] = {"mgr"}
    job = await jobs.submit(await as_actor(session, alice), request_for(project))
    await jobs.cancel(await as_actor(session, manager), job.id)
    assert fake.jobs["1000"].state.is_terminal
    events = await service.list_events(session, await as_actor(session, alice), job.id)
    assert events[-1].reason == "cancel requested by mgr"


async def test_member_may_see_but_not_cancel_a_colleagues_job(
    session: AsyncSession, jobs: service.JobService
) -> None:
    alice, carol, _, project = await physics(session)
    job = await jobs.submit(await as_actor(session, alice), request_for(project))
    assert (await service.get_job(session, await as_actor(session, carol), job.id)).id == job.id
    with pytest.raises(Forbidden):
        await jobs.cancel(await as_actor(session, carol), job.id)


async def test_outsider_is_told_the_job_does_not_exist(
    session: AsyncSession, jobs: service.JobService
) -> None:
    alice, _, _, project = await physics(session)
    job = await jobs.submit(await as_actor(session, alice), request_for(project))
    bob = await make_user(session, "bob", cluster_username="bob")
    await session.commit()
    with pytest.raises(NotFound):
        await jobs.cancel(await as_actor(session, bob), job.id)
    with pytest.raises(NotFound):
        await service.get_job(session, await as_actor(session, bob), job.id)


async def test_hold_is_refused_for_a_running_job(
    session: AsyncSession, jobs: service.JobService, fake: FakeScheduler
) -> None:
    alice, _, _, project = await physics(session)
    job = await jobs.submit(await as_actor(session, alice), request_for(project))
    await session.execute(Job.__table__.update().values(state="running"))
    await session.commit()
    with pytest.raises(Conflict):
        await jobs.hold(await as_actor(session, alice), job.id)


async def test_resubmit_clones_with_edits(
    session: AsyncSession, jobs: service.JobService, fake: FakeScheduler
) -> None:
    alice, _, _, project = await physics(session)
    original = await jobs.submit(
        await as_actor(session, alice), request_for(project, time_limit_minutes=5)
    )
    clone = await jobs.resubmit(
        await as_actor(session, alice), original.id, {"time_limit_minutes": 9, "name": "again"}
    )
    assert clone.id != original.id
    assert (clone.time_limit_minutes, clone.name, clone.script) == (9, "again", original.script)
    assert fake.specs[clone.slurm_job_id or ""].time_limit == 9


async def test_list_jobs_pages_newest_first_over_visible_jobs(session: AsyncSession) -> None:
    alice, _, manager, project = await physics(session)
    other = await make_project(session, "Chem", slurm_account="chemistry")
    bob = await make_user(session, "bob", cluster_username="bob")
    mine = [await make_job(session, alice, project) for _ in range(5)]
    await make_job(session, bob, other)
    await session.commit()
    as_alice = await as_actor(session, alice)
    first, after = await listing.list_page(session, as_alice, ListQuery(), None, 3)
    second, last = await listing.list_page(session, as_alice, ListQuery(), after, 3)
    seen = [row.job.id for row in first + second]
    assert seen == sorted((job.id for job in mine), reverse=True)
    assert last is None
    as_manager = await as_actor(session, manager)
    running, _ = await listing.list_page(
        session, as_manager, ListQuery(states=("running",)), None, 50
    )
    assert running == []


async def test_job_events_are_recorded_for_every_poller_transition(
    sessionmaker: async_sessionmaker[AsyncSession],
    session: AsyncSession,
    jobs: service.JobService,
    fake: FakeScheduler,
) -> None:
    alice, _, _, project = await physics(session)
    job = await jobs.submit(await as_actor(session, alice), request_for(project))
    fake.start("1000")
    await poll_cluster_once(sessionmaker, CLUSTER, fake)
    fake.finish("1000", exit_code=3)
    await poll_cluster_once(sessionmaker, CLUSTER, fake)
    session.expire_all()
    row = await session.get(Job, job.id)
    assert row is not None
    assert (row.state, row.exit_code) == ("failed", 3)
    transitions = await session.scalars(
        select(JobEvent.to_state).where(JobEvent.job_id == job.id).order_by(JobEvent.id)
    )
    assert list(transitions) == ["submitting", "pending", "running", "failed"]


async def test_resubmit_without_edits_repeats_the_exact_request(
    session: AsyncSession, jobs: service.JobService, fake: FakeScheduler
) -> None:
    alice, _, _, project = await physics(session)
    actor = await as_actor(session, alice)
    asked = request_for(
        project,
        partition="debug",
        time_limit_minutes=30,
        nodes=1,
        ntasks=4,
        cpus_per_task=2,
        memory_mb=2048,
        gpus=1,
        gpu_type="a100",
        environment={"OMP_NUM_THREADS": "2", "MODE": "fast"},
        stdout_path="/scratch/alice/out-%j.txt",
    )
    original = await jobs.submit(actor, asked)
    clone = await jobs.resubmit(actor, original.id)
    first, second = fake.specs[original.slurm_job_id or ""], fake.specs[clone.slurm_job_id or ""]
    assert second.comment != first.comment
    assert dataclasses.replace(second, comment=first.comment) == first
    assert (clone.ntasks, clone.cpus_per_task, clone.cpus) == (4, 2, 2)
    assert clone.environment == {"OMP_NUM_THREADS": "2", "MODE": "fast"}
