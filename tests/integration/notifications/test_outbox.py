"""The outbox on both databases: written with the state change, never twice, claimed once."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db import unit_of_work
from app.models.base import utc_now
from app.models.jobs import Job, JobEvent
from app.models.notifications import Notification
from app.notifications import outbox
from app.notifications.outbox import Outcome, StateChange
from app.notifications.retry import MAX_ATTEMPTS
from app.poller import store
from app.poller.rules import Transition
from tests.factories import make_job
from tests.integration.notifications.conftest import add_rule, outbox_rows
from tests.world import World

# The portability tier: these also run on SQLite (ADR 0018).
pytestmark = pytest.mark.sqlite

CLAIM = timedelta(minutes=2)


async def _running_job(sessionmaker: async_sessionmaker[AsyncSession], world: World) -> Job:
    async with sessionmaker() as session:
        job = await make_job(
            session,
            world.alice,
            world.physics,
            state="running",
            slurm_job_id="501",
            started_at=utc_now(),
        )
        await session.commit()
        return job


async def test_job_end_writes_one_row_per_matching_rule_with_the_state_change(
    sessionmaker: async_sessionmaker[AsyncSession], world: World
) -> None:
    job = await _running_job(sessionmaker, world)
    by_email = await add_rule(sessionmaker, world.alice, "ended")
    by_hook = await add_rule(sessionmaker, world.alice, "failed", job=job, webhook_url="http://h/x")
    await add_rule(sessionmaker, world.alice, "started")
    await add_rule(sessionmaker, world.bob, "ended")
    await store.apply_transitions(sessionmaker, [Transition(job.id, "running", "timeout")])
    rows = await outbox_rows(sessionmaker)
    assert {(r.rule_id, r.event, r.job_state) for r in rows} == {
        (by_email.id, "ended", "timeout"),
        (by_hook.id, "failed", "timeout"),
    }
    assert all(r.status == "pending" and r.attempts == 0 for r in rows)


async def test_a_second_poller_applying_the_same_change_adds_nothing(
    sessionmaker: async_sessionmaker[AsyncSession], world: World
) -> None:
    job = await _running_job(sessionmaker, world)
    await add_rule(sessionmaker, world.alice, "ended")
    change = StateChange(job.id, world.alice.id, "running", "completed", True)
    for _ in range(2):
        async with unit_of_work(sessionmaker) as session:
            await outbox.record_state_changes(session, [change])
    assert len(await outbox_rows(sessionmaker)) == 1


async def test_the_unique_key_refuses_a_duplicate_row(
    sessionmaker: async_sessionmaker[AsyncSession], world: World
) -> None:
    job = await _running_job(sessionmaker, world)
    rule = await add_rule(sessionmaker, world.alice, "ended")
    values = {"rule_id": rule.id, "user_id": world.alice.id, "job_id": job.id, "event": "ended"}
    async with unit_of_work(sessionmaker) as session:
        session.add(Notification(**values, job_state="completed"))
    with pytest.raises(IntegrityError):
        async with unit_of_work(sessionmaker) as session:
            session.add(Notification(**values, job_state="failed"))


async def test_a_rolled_back_cycle_leaves_neither_the_change_nor_the_notification(
    sessionmaker: async_sessionmaker[AsyncSession], world: World
) -> None:
    job = await _running_job(sessionmaker, world)
    await add_rule(sessionmaker, world.alice, "ended")
    with pytest.raises(RuntimeError):
        async with unit_of_work(sessionmaker) as session:
            row = await session.get(Job, job.id)
            assert row is not None
            row.state = "completed"
            change = StateChange(job.id, world.alice.id, "running", "completed", True)
            await outbox.record_state_changes(session, [change])
            raise RuntimeError("the poller died here")
    assert await outbox_rows(sessionmaker) == []
    async with sessionmaker() as session:
        assert (await session.get(Job, job.id)).state == "running"  # type: ignore[union-attr]


async def test_array_tasks_notify_through_their_array_only(
    sessionmaker: async_sessionmaker[AsyncSession], world: World
) -> None:
    parent = await _running_job(sessionmaker, world)
    async with sessionmaker() as session:
        task = await make_job(
            session, world.alice, world.physics, state="running", array_parent_id=parent.id
        )
        await session.commit()
    await add_rule(sessionmaker, world.alice, "ended")
    await store.apply_transitions(sessionmaker, [Transition(task.id, "running", "completed")])
    assert await outbox_rows(sessionmaker) == []


async def _pending_rows(
    sessionmaker: async_sessionmaker[AsyncSession], world: World, count: int
) -> None:
    rule = await add_rule(sessionmaker, world.alice, "ended")
    async with unit_of_work(sessionmaker) as session:
        for n in range(count):
            job = await make_job(session, world.alice, world.physics, state="completed")
            session.add(
                Notification(
                    rule_id=rule.id,
                    user_id=world.alice.id,
                    job_id=job.id,
                    event="ended",
                    job_state="completed",
                    next_attempt_at=utc_now(),
                )
            )
            assert n >= 0


async def test_two_dispatchers_claim_disjoint_batches(
    sessionmaker: async_sessionmaker[AsyncSession], world: World
) -> None:
    await _pending_rows(sessionmaker, world, 6)
    now = utc_now()
    first, second = await asyncio.gather(
        outbox.claim(sessionmaker, now=now, limit=4, duration=CLAIM),
        outbox.claim(sessionmaker, now=now, limit=4, duration=CLAIM),
    )
    ids_first, ids_second = {c.id for c in first}, {c.id for c in second}
    assert not ids_first & ids_second
    assert len(ids_first | ids_second) == 6
    assert await outbox.claim(sessionmaker, now=now, limit=10, duration=CLAIM) == []


async def test_a_claim_whose_dispatcher_died_is_taken_again_after_it_expires(
    sessionmaker: async_sessionmaker[AsyncSession], world: World
) -> None:
    await _pending_rows(sessionmaker, world, 1)
    now = utc_now()
    [lost] = await outbox.claim(sessionmaker, now=now, limit=1, duration=CLAIM)
    assert await outbox.claim(sessionmaker, now=now + CLAIM / 2, limit=1, duration=CLAIM) == []
    later = now + CLAIM + timedelta(seconds=1)
    [again] = await outbox.claim(sessionmaker, now=later, limit=1, duration=CLAIM)
    assert (again.id, again.attempt) == (lost.id, 2)
    # The stalled dispatcher's late answer is logged but no longer settles the row.
    await outbox.settle(sessionmaker, lost, Outcome(True, 250, "ok"), later)
    [row] = await outbox_rows(sessionmaker)
    assert (row.status, row.claim_token) == ("pending", again.token)


async def test_a_failed_delivery_is_due_again_after_the_back_off(
    sessionmaker: async_sessionmaker[AsyncSession], world: World
) -> None:
    await _pending_rows(sessionmaker, world, 1)
    now = utc_now()
    [claimed] = await outbox.claim(sessionmaker, now=now, limit=1, duration=CLAIM)
    await outbox.settle(sessionmaker, claimed, Outcome(False, 503, "busy", "503"), now)
    [row] = await outbox_rows(sessionmaker)
    assert row.status == "pending" and row.claim_token is None
    assert row.next_attempt_at == now + timedelta(seconds=30)
    assert await outbox.claim(sessionmaker, now=now, limit=1, duration=CLAIM) == []
    retry_at = now + timedelta(seconds=31)
    [retried] = await outbox.claim(sessionmaker, now=retry_at, limit=1, duration=CLAIM)
    await outbox.settle(sessionmaker, retried, Outcome(True, 200, "ok"), retry_at)
    [row] = await outbox_rows(sessionmaker)
    assert (row.status, row.attempts) == ("sent", 2)


async def test_a_permanent_failure_is_not_retried(
    sessionmaker: async_sessionmaker[AsyncSession], world: World
) -> None:
    await _pending_rows(sessionmaker, world, 1)
    now = utc_now()
    [claimed] = await outbox.claim(sessionmaker, now=now, limit=1, duration=CLAIM)
    refused = Outcome(False, error="refused address", is_permanent=True)
    await outbox.settle(sessionmaker, claimed, refused, now)
    [row] = await outbox_rows(sessionmaker)
    assert row.status == "failed"


async def test_a_row_whose_every_claim_died_unsettled_fails_instead_of_being_claimed_forever(
    sessionmaker: async_sessionmaker[AsyncSession], world: World
) -> None:
    await _pending_rows(sessionmaker, world, 1)
    now = utc_now()
    for _ in range(MAX_ATTEMPTS):
        # Each dispatcher that claims it dies before it can settle it.
        [claimed] = await outbox.claim(sessionmaker, now=now, limit=1, duration=CLAIM)
        now += CLAIM + timedelta(seconds=1)
    assert claimed.attempt == MAX_ATTEMPTS
    assert await outbox.claim(sessionmaker, now=now, limit=1, duration=CLAIM) == []
    [row] = await outbox_rows(sessionmaker)
    assert (row.status, row.attempts, row.claim_token) == ("failed", MAX_ATTEMPTS, None)


async def test_changes_applied_in_chunks_all_land_with_their_events_and_notifications(
    sessionmaker: async_sessionmaker[AsyncSession],
    world: World,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A cycle changing more rows than one chunk writes every one of them, each with its
    event and its notification, in the cycle's one transaction."""
    monkeypatch.setattr(store, "UPDATE_CHUNK", 2)
    async with sessionmaker() as session:
        jobs = [
            await make_job(
                session,
                world.alice,
                world.physics,
                state="running",
                slurm_job_id=str(600 + n),
                started_at=utc_now(),
            )
            for n in range(5)
        ]
        await session.commit()
    rule = await add_rule(sessionmaker, world.alice, "ended")
    changes = [Transition(job.id, "running", "completed") for job in jobs]
    await store.apply_transitions(sessionmaker, changes)
    async with sessionmaker() as session:
        states = set(
            await session.scalars(select(Job.state).where(Job.id.in_([j.id for j in jobs])))
        )
        events = await session.scalar(
            select(func.count()).select_from(JobEvent).where(JobEvent.to_state == "completed")
        )
    assert states == {"completed"} and events == 5
    rows = await outbox_rows(sessionmaker)
    assert sorted(r.job_id for r in rows if r.rule_id == rule.id) == sorted(j.id for j in jobs)


async def test_a_cycle_that_changes_seventy_thousand_jobs_writes_their_notifications(
    sessionmaker: async_sessionmaker[AsyncSession], world: World
) -> None:
    """More jobs than PostgreSQL (65,535) or SQLite (32,766) binds in one statement, as a
    mass cancel of a large queue brings: the rules are found and the rows written."""
    job = await _running_job(sessionmaker, world)
    by_email = await add_rule(sessionmaker, world.alice, "ended")
    by_hook = await add_rule(sessionmaker, world.alice, "failed", job=job, webhook_url="http://h/x")
    await add_rule(sessionmaker, world.bob, "ended")
    # carol's jobs, under ids the database never gave out: she has no rules, so only alice's
    # job has rows.
    others = [
        StateChange(job.id + offset, world.carol.id, "pending", "cancelled", False)
        for offset in range(1, 70_000)
    ]
    mine = StateChange(job.id, world.alice.id, "running", "failed", True)
    async with unit_of_work(sessionmaker) as session:
        written = await outbox.record_state_changes(session, [*others, mine])
    rows = await outbox_rows(sessionmaker)
    assert written == 2
    assert {(r.rule_id, r.job_id, r.event) for r in rows} == {
        (by_email.id, job.id, "ended"),
        (by_hook.id, job.id, "failed"),
    }
