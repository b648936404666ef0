"""A job just submitted through the portal is looked at sooner: the poller's next cycle comes
within seconds instead of a whole interval, for a short while, and only for submissions."""

from __future__ import annotations

import asyncio
import contextlib
import time

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.poller.fresh import FreshWatch
from app.poller.runner import PollTiming, poll_cluster_forever
from app.scheduler.fake import FakeScheduler
from tests.factories import make_job
from tests.world import World

Maker = async_sessionmaker[AsyncSession]


async def _add_job(sessionmaker: Maker, people: World, **fields: object) -> int:
    async with sessionmaker() as session:
        job = await make_job(session, people.alice, people.physics, **fields)  # type: ignore[arg-type]
        await session.commit()
    return job.id


async def _until(check: object, seconds: float) -> float:
    """How long ``check()`` took to come true; fails past ``seconds``."""
    started = time.monotonic()
    while not check():  # type: ignore[operator]
        assert time.monotonic() - started < seconds, "the poller did not look in time"
        await asyncio.sleep(0.05)
    return time.monotonic() - started


async def test_a_submission_brings_the_next_cycle_forward_from_a_long_interval(
    sessionmaker: Maker, people: World
) -> None:
    fake = FakeScheduler(accounts={"alice": ["physics"]})
    stop = asyncio.Event()
    poller = asyncio.create_task(
        poll_cluster_forever(
            sessionmaker,
            people.physics.cluster,
            fake,
            stop,
            timing=PollTiming(60.0),
            holder="fresh-test",
            watch=FreshWatch(0.2, window=1.0),
        )
    )
    try:
        await _until(lambda: fake.calls.count("queue") == 1, 10)
        await _add_job(sessionmaker, people, slurm_job_id="77")
        waited = await _until(lambda: fake.calls.count("queue") >= 2, 10)
    finally:
        stop.set()
        with contextlib.suppress(asyncio.CancelledError):
            await poller
    assert waited < 10  # the interval is a minute


async def test_only_a_submission_through_the_portal_makes_a_cluster_fresh_and_only_for_a_while(
    sessionmaker: Maker, people: World
) -> None:
    cluster = people.physics.cluster
    watch = FreshWatch(1.0, window=30.0)
    assert not await watch.wants_a_look(sessionmaker, cluster, now=0.0)  # where it starts
    parent = await _add_job(sessionmaker, people, slurm_job_id="80", array_spec="1-2")
    assert await watch.wants_a_look(sessionmaker, cluster, now=1.0)
    assert await watch.wants_a_look(sessionmaker, cluster, now=30.0)
    await _add_job(sessionmaker, people, array_parent_id=parent, array_task_id=1)
    await _add_job(sessionmaker, people, submitted_outside=True)
    assert not await watch.wants_a_look(sessionmaker, cluster, now=31.5)
    assert not watch.is_on(poll_interval=1.0) and FreshWatch(2.0).is_on(poll_interval=10.0)
