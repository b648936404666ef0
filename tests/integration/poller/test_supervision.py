"""No failure in one background task ends another: a cluster, the dispatcher, a delivery.

The poller runs inside the web app here (the single-machine default), with two clusters: one
answers normally, the other fails in a way our code does not expect (a fault, not a
SchedulerError). The healthy cluster's job must still be followed to its end, and
``/healthz`` and ``/metrics`` must name the failing task and its cause.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.config import Settings
from app.main import create_app
from app.models.jobs import Job
from app.models.notifications import DeliveryAttempt, NotificationRule
from app.scheduler.fake import FakeScheduler
from app.scheduler.registry import SchedulerRegistry
from app.scheduler.types import JobInfo, JobState
from tests.factories import make_job
from tests.integration.notifications.conftest import outbox_rows
from tests.notify_servers import Mailbox, smtp_server, webhook_receiver
from tests.world import World

DEADLINE_SECONDS = 20.0
# "LOCALHOST" in full-width letters: a name the resolver knows, an HTTP header cannot carry.
FULL_WIDTH_LOCALHOST = "\uff2c\uff2f\uff23\uff21\uff2c\uff28\uff2f\uff33\uff34"


class BrokenScheduler(FakeScheduler):
    """A cluster whose answer our code cannot handle, every time it is asked."""

    async def queue(self) -> list[JobInfo]:
        self.calls.append("queue")
        raise RuntimeError("squeue printed a line nobody expected")


def _running(job_id: str) -> JobInfo:
    return JobInfo(
        job_id=job_id,
        state=JobState.RUNNING,
        native_state="RUNNING",
        submit_time=datetime.now(UTC) - timedelta(minutes=5),
        start_time=datetime.now(UTC) - timedelta(minutes=4),
        user="alice",
        account="physics",
    )


async def _running_job(sessionmaker: async_sessionmaker[AsyncSession], world: World) -> int:
    async with sessionmaker() as session:
        job = await make_job(
            session,
            world.alice,
            world.physics,
            state="running",
            slurm_job_id="1000",
            started_at=datetime.now(UTC),
        )
        await session.commit()
        return job.id


async def _state(sessionmaker: async_sessionmaker[AsyncSession], job_id: int) -> str:
    async with sessionmaker() as session:
        return (await session.scalars(select(Job.state).where(Job.id == job_id))).one()


async def _until(check: Callable[[], Awaitable[bool]], what: str) -> None:
    deadline = asyncio.get_running_loop().time() + DEADLINE_SECONDS
    while not await check():
        if asyncio.get_running_loop().time() > deadline:
            pytest.fail(f"still not {what} after {DEADLINE_SECONDS} s")
        await asyncio.sleep(0.1)


@pytest.fixture
def good() -> FakeScheduler:
    return FakeScheduler(keeps_ended_jobs=False)


@pytest.fixture
def mail() -> Iterator[tuple[Mailbox, int]]:
    with smtp_server() as server:
        yield server


@pytest.fixture
def with_broken_cluster(request: pytest.FixtureRequest) -> bool:
    """Whether the portal polls the broken cluster too; a test changes it by ``indirect``."""
    return bool(getattr(request, "param", True))


@pytest.fixture
async def portal(
    db_url: str, good: FakeScheduler, mail: tuple[Mailbox, int], with_broken_cluster: bool
) -> AsyncIterator[FastAPI]:
    settings = Settings(
        env="dev",
        database_url=db_url,
        clusters_file=None,
        run_poller_in_web=True,
        poll_interval=0.2,
        usage_ingest_interval=0,
        smtp_host="127.0.0.1",
        smtp_port=mail[1],
        smtp_security="none",
        webhook_allow_private=True,
    )
    clusters: dict[str, FakeScheduler] = {"testcluster": good}
    if with_broken_cluster:
        clusters["broken"] = BrokenScheduler()
    registry = SchedulerRegistry.of(clusters)
    application = create_app(settings, registry=registry)
    async with application.router.lifespan_context(application):
        yield application


@pytest.fixture
async def ops(portal: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    # /healthz's details are for operations networks: loopback by default.
    transport = httpx.ASGITransport(app=portal, client=("127.0.0.1", 5000))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        yield http


async def test_a_cluster_that_keeps_failing_stops_no_other_cluster_and_shows_in_healthz(
    sessionmaker: async_sessionmaker[AsyncSession],
    world: World,
    good: FakeScheduler,
    ops: httpx.AsyncClient,
) -> None:
    job_id = await _running_job(sessionmaker, world)
    good.jobs["1000"] = _running("1000")

    async def broken_failed_twice() -> bool:
        health = (await ops.get("/healthz")).json()
        return health.get("tasks", {}).get("poller:broken", {}).get("crashes", 0) >= 2

    await _until(broken_failed_twice, "failed twice")
    good.finish("1000")

    async def job_ended() -> bool:
        return await _state(sessionmaker, job_id) == "completed"

    await _until(job_ended, "followed to its end")
    tasks = (await ops.get("/healthz")).json()["tasks"]
    assert tasks["poller:testcluster"] == {
        "running": True,
        "crashes": 0,
        "last_error": None,
        "last_crash_at": None,
    }
    assert tasks["poller:broken"]["last_error"] == (
        "RuntimeError: squeue printed a line nobody expected"
    )
    assert tasks["notifications"]["running"] is True
    metrics = (await ops.get("/metrics")).text
    assert 'portal_background_task_crashes_total{task="poller:broken"}' in metrics
    assert 'portal_background_task_running{task="poller:testcluster"} 1.0' in metrics


async def test_an_email_no_message_can_carry_fails_alone_with_its_reason(
    sessionmaker: async_sessionmaker[AsyncSession],
    world: World,
    good: FakeScheduler,
    ops: httpx.AsyncClient,
    mail: tuple[Mailbox, int],
) -> None:
    async with sessionmaker() as session:
        alice = await session.get(type(world.alice), world.alice.id)
        assert alice is not None
        # A line break in a stored address: no message may carry it as a header.
        alice.email = "alice@example.org\nBcc: everyone@example.org"
        session.add(NotificationRule(user_id=alice.id, event="ended", channel="email"))
        await session.commit()
    first = await _running_job(sessionmaker, world)
    good.jobs["1000"] = _running("1000")
    good.finish("1000")

    async def settled() -> bool:
        rows = await outbox_rows(sessionmaker)
        return bool(rows) and rows[0].status != "pending"

    await _until(settled, "settled")
    [row] = await outbox_rows(sessionmaker)
    assert row.status == "failed" and row.attempts == 1
    async with sessionmaker() as session:
        [attempt] = await session.scalars(select(DeliveryAttempt))
    assert attempt.error is not None
    assert attempt.error.startswith("This notification cannot be sent: ValueError: Header")
    assert mail[0].messages == []
    # The pollers outlived it: the next job is still followed.
    async with sessionmaker() as session:
        second = await make_job(
            session, world.alice, world.physics, state="running", slurm_job_id="1001"
        )
        await session.commit()
    good.jobs["1001"] = _running("1001")
    good.finish("1001")

    async def second_ended() -> bool:
        return await _state(sessionmaker, second.id) == "completed"

    await _until(second_ended, "followed to its end")
    assert await _state(sessionmaker, first) == "completed"


# The webhooks alone: what they do to the pollers is what is judged.
@pytest.mark.parametrize("with_broken_cluster", [False], indirect=True)
async def test_webhook_rules_whose_hosts_are_not_plain_ascii_stop_no_poller(
    sessionmaker: async_sessionmaker[AsyncSession],
    world: World,
    good: FakeScheduler,
    ops: httpx.AsyncClient,
) -> None:
    """The probe's attack as its rows were stored before host names were normalised: one
    host typed in full-width letters, one with no ASCII form at all. Building either request
    once raised out of the dispatcher, whose task group then cancelled every poller."""
    with webhook_receiver() as (receiver, url):
        typed = url.replace("127.0.0.1", FULL_WIDTH_LOCALHOST)
        async with sessionmaker() as session:
            for target in (typed, "http://exa mple.org/in"):
                rule = NotificationRule(
                    user_id=world.alice.id,
                    event="ended",
                    channel="webhook",
                    webhook_url=target,
                    secret="s" * 32,
                )
                session.add(rule)
            await session.commit()
        first = await _running_job(sessionmaker, world)
        good.jobs["1000"] = _running("1000")
        good.finish("1000")

        async def settled() -> bool:
            rows = await outbox_rows(sessionmaker)
            return len(rows) == 2 and all(row.status != "pending" for row in rows)

        await _until(settled, "settled")
        [request] = receiver.requests
    assert request.headers["Host"] == url.split("/")[2].replace("127.0.0.1", "localhost")
    async with sessionmaker() as session:
        refused = (await session.scalars(select(DeliveryAttempt).filter_by(is_success=False))).one()
    assert refused.error == (
        "exa mple.org is not a valid host name (letters, digits and hyphens in each part)."
    )
    assert sorted(row.status for row in await outbox_rows(sessionmaker)) == ["failed", "sent"]
    # The pollers and the dispatcher outlived both: the next job is still followed.
    async with sessionmaker() as session:
        second = await make_job(
            session, world.alice, world.physics, state="running", slurm_job_id="1001"
        )
        await session.commit()
    good.jobs["1001"] = _running("1001")
    good.finish("1001")

    async def second_ended() -> bool:
        return await _state(sessionmaker, second.id) == "completed"

    await _until(second_ended, "followed to its end")
    assert await _state(sessionmaker, first) == "completed"
    tasks = (await ops.get("/healthz")).json()["tasks"]
    assert tasks["notifications"]["crashes"] == 0
    assert tasks["poller:testcluster"]["crashes"] == 0
