"""Idle sessions on both databases, with the in-memory scheduler standing in for Slurm and
fake app servers: probed as their owner, warned through their rules, kept, ended as by End."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import httpx
import pytest
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.errors import Conflict
from app.interactive import service
from app.interactive.definitions import AppDefinition, load_definitions
from app.interactive.idle_check import IdleWatch, check_idle
from app.interactive.sessions import LaunchForm, describe
from app.jobs.service import JobService
from app.models.base import utc_now
from app.models.interactive import InteractiveSession
from app.models.jobs import Job, JobEvent
from app.models.notifications import Notification, NotificationRule
from app.notifications.messages import email_message, webhook_body
from app.notifications.outbox import claim
from app.poller.cycle import poll_cluster_once
from app.poller.reconcile import Grace
from app.scheduler.fake import FakeScheduler
from app.scheduler.states import JobState
from tests.factories import DEFAULT_CLUSTER, as_actor, fake_registry, make_app_session
from tests.world import World

pytestmark = pytest.mark.sqlite
JUPYTER = load_definitions()["jupyterlab"]
SECRET = "s3cr3t-" + "x" * 24
NO_WAIT = Grace(submit=timedelta(0))
LIMIT, WARNING = timedelta(seconds=40), timedelta(seconds=20)
T0 = datetime(2026, 11, 27, 14, 2, tzinfo=utc_now().tzinfo)


@pytest.fixture
def fake() -> FakeScheduler:
    return FakeScheduler(accounts={"alice": ["physics"], "carol": ["physics"]})


@pytest.fixture
def jobs(sessionmaker: async_sessionmaker[AsyncSession], fake: FakeScheduler) -> JobService:
    return JobService(sessionmaker, fake_registry(fake))


class FakeJupyter:
    """A Jupyter Server's api/status: its last activity as the test sets it, each request kept."""

    def __init__(self, last_activity: datetime | None = T0, status: int = 200) -> None:
        self.last_activity, self.status = last_activity, status
        self.seen: list[httpx.Request] = []

    def reply(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        last = self.last_activity
        stamp = last.isoformat().replace("+00:00", "Z") if last is not None else None
        return httpx.Response(self.status, json={"started": "x", "last_activity": stamp})

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(self.reply))


def _watch(
    client: httpx.AsyncClient,
    definitions: dict[str, AppDefinition] | None = None,
    batch: int = 5,
) -> IdleWatch:
    apps = definitions or {"jupyterlab": JUPYTER}
    return IdleWatch(apps, client, LIMIT, WARNING, batch=batch, every=1)


async def _running_session(
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    world: World,
    jobs: JobService,
    fake: FakeScheduler,
) -> InteractiveSession:
    """alice's JupyterLab, launched through the service, running on c7 and answering."""
    alice = await as_actor(session, world.alice)
    form = LaunchForm(project_id=world.physics.id)
    row = await service.launch(session, alice, jobs, JUPYTER, form, "/home/alice")
    await session.commit()
    (slurm_id,) = fake.jobs
    fake.start(slurm_id)
    fake.set_state(slurm_id, JobState.RUNNING, nodes="c7")
    await poll_cluster_once(sessionmaker, DEFAULT_CLUSTER, fake, grace=NO_WAIT)
    row.port, row.secret, row.ready_at = 40123, SECRET, T0
    await session.commit()
    await session.refresh(row, ["job"])
    return row


@pytest.fixture
async def running(
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    world: World,
    jobs: JobService,
    fake: FakeScheduler,
) -> InteractiveSession:
    return await _running_session(session, sessionmaker, world, jobs, fake)


async def _idle_rule(session: AsyncSession, world: World) -> None:
    session.add(
        NotificationRule(
            user_id=world.alice.id,
            event="session_idle",
            channel="webhook",
            webhook_url="https://hooks.example.org/portal",
            secret="k" * 32,
        )
    )
    await session.commit()


async def _reread(session: AsyncSession, row: InteractiveSession) -> InteractiveSession:
    found = await session.get(InteractiveSession, row.id, populate_existing=True)
    assert found is not None
    await session.refresh(found, ["job"])
    return found


async def _slurm_id(session: AsyncSession, row: InteractiveSession, slurm_id: str) -> None:
    await session.execute(update(Job).where(Job.id == row.job_id).values(slurm_job_id=slurm_id))


async def _notifications(session: AsyncSession) -> list[Notification]:
    return list(
        await session.scalars(
            select(Notification)
            .where(Notification.event == "session_idle")
            .execution_options(populate_existing=True)
        )
    )


async def test_an_idle_jupyterlab_is_warned_then_ended_as_its_owner_with_its_reason_in_its_history(
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    world: World,
    fake: FakeScheduler,
    running: InteractiveSession,
) -> None:
    await _idle_rule(session, world)
    jupyter = FakeJupyter(last_activity=T0)
    async with jupyter.client() as client:
        watch = _watch(client)
        calls_early = await check_idle(
            sessionmaker, DEFAULT_CLUSTER, fake, watch, T0 + timedelta(seconds=10)
        )
        early = await _reread(session, running)
        assert (early.idle_since, early.idle_warned_at) == (T0, None)

        await check_idle(sessionmaker, DEFAULT_CLUSTER, fake, watch, T0 + timedelta(seconds=20))
        warned = await _reread(session, running)
        view = describe(warned, {"jupyterlab": JUPYTER}, T0 + timedelta(seconds=20))
        await check_idle(sessionmaker, DEFAULT_CLUSTER, fake, watch, T0 + timedelta(seconds=30))
        (notification,) = await _notifications(session)
        calls_end = await check_idle(
            sessionmaker, DEFAULT_CLUSTER, fake, watch, T0 + timedelta(seconds=40)
        )

    # Asked as its owner, through the route the proxy uses: the job's node, the secret.
    first = jupyter.seen[0]
    assert str(first.url) == f"http://c7:40123/apps/sessions/{running.uuid}/api/status"
    assert first.headers["authorization"] == f"token {SECRET}"
    assert (calls_early, calls_end) == (1, 2)  # one probe; at the end, the probe and the cancel
    assert view.is_warned_idle and (view.idle_since, view.idle_ends_at) == (T0, T0 + LIMIT)
    assert (notification.job_id, notification.status) == (running.job_id, "pending")
    (slurm_id,) = fake.jobs
    assert fake.jobs[slurm_id].state == JobState.CANCELLED
    ended = await _reread(session, running)
    assert ended.idle_ended_at == T0 + timedelta(seconds=40)
    ended_view = describe(ended, {"jupyterlab": JUPYTER}, utc_now())
    assert ended_view.ended_idle and ended_view.is_ending and ended_view.connect_path is None
    reasons = list(
        await session.scalars(
            select(JobEvent.reason).where(
                JobEvent.job_id == running.job_id, JobEvent.source == "system"
            )
        )
    )
    assert reasons == ["ended: idle for 40 seconds"]


async def test_the_idle_warning_reaches_the_owner_with_when_the_session_will_be_ended(
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    world: World,
    fake: FakeScheduler,
    running: InteractiveSession,
) -> None:
    await _idle_rule(session, world)
    async with FakeJupyter(last_activity=T0).client() as client:
        await check_idle(
            sessionmaker, DEFAULT_CLUSTER, fake, _watch(client), T0 + timedelta(seconds=20)
        )

    (claimed,) = await claim(sessionmaker, now=utc_now(), limit=5, duration=timedelta(minutes=1))
    mail = email_message(claimed, "portal@example.org")
    body = json.loads(webhook_body(claimed, 1))

    assert claimed.event == "session_idle"
    assert mail["Subject"] == (
        "Your jupyterlab session will be ended at 14:02 UTC: nobody has used it since 14:02 UTC"
    )
    assert "press “Keep it” on your sessions page: /apps" in mail.get_content()
    assert body["event"] == "session_idle" and body["job"]["id"] == running.job_id
    assert body["session"]["ends_at"] == (T0 + LIMIT).isoformat()


async def test_keep_it_starts_the_clock_again_and_a_second_idle_spell_is_warned_again(
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    world: World,
    fake: FakeScheduler,
    running: InteractiveSession,
) -> None:
    await _idle_rule(session, world)
    alice = await as_actor(session, world.alice)
    async with FakeJupyter(last_activity=T0).client() as client:
        watch = _watch(client)
        await check_idle(sessionmaker, DEFAULT_CLUSTER, fake, watch, T0 + timedelta(seconds=25))
        await service.keep(session, alice, running.id, T0 + timedelta(seconds=26))
        await session.commit()
        kept = await _reread(session, running)
        kept_view = describe(kept, {"jupyterlab": JUPYTER}, T0)
        await check_idle(sessionmaker, DEFAULT_CLUSTER, fake, watch, T0 + timedelta(seconds=41))
        after_limit = await _reread(session, running)
        await check_idle(sessionmaker, DEFAULT_CLUSTER, fake, watch, T0 + timedelta(seconds=50))

    (slurm_id,) = fake.jobs
    assert not kept_view.is_warned_idle
    assert fake.jobs[slurm_id].state == JobState.RUNNING
    assert (after_limit.idle_since, after_limit.idle_warned_at) == (
        T0 + timedelta(seconds=26),
        None,
    )
    (again,) = await _notifications(session)
    assert (again.status, again.attempts) == ("pending", 0)
    rewarned = await _reread(session, running)
    # Warned 4 s late: the owner still gets the whole 20 s.
    assert rewarned.idle_ends_at == T0 + timedelta(seconds=70)


async def test_a_session_first_seen_idle_past_its_limit_is_warned_not_ended(
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    fake: FakeScheduler,
    running: InteractiveSession,
) -> None:
    async with FakeJupyter(last_activity=T0).client() as client:
        await check_idle(
            sessionmaker, DEFAULT_CLUSTER, fake, _watch(client), T0 + timedelta(hours=3)
        )

    row = await _reread(session, running)
    assert row.idle_ends_at == T0 + timedelta(hours=3, seconds=20)
    assert row.idle_ended_at is None
    assert fake.jobs[next(iter(fake.jobs))].state == JobState.RUNNING


async def test_use_of_the_app_withdraws_the_warning(
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    fake: FakeScheduler,
    running: InteractiveSession,
) -> None:
    jupyter = FakeJupyter(last_activity=T0)
    async with jupyter.client() as client:
        await check_idle(
            sessionmaker, DEFAULT_CLUSTER, fake, _watch(client), T0 + timedelta(seconds=25)
        )
        jupyter.last_activity = T0 + timedelta(seconds=30)
        await check_idle(
            sessionmaker, DEFAULT_CLUSTER, fake, _watch(client), T0 + timedelta(seconds=45)
        )

    used = await _reread(session, running)
    assert (used.idle_since, used.idle_warned_at, used.idle_ends_at) == (
        T0 + timedelta(seconds=30),
        None,
        None,
    )
    assert fake.jobs[next(iter(fake.jobs))].state == JobState.RUNNING


@pytest.mark.parametrize("jupyter", [FakeJupyter(status=500), FakeJupyter(last_activity=None)])
async def test_a_session_whose_app_cannot_say_is_never_ended(
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    fake: FakeScheduler,
    running: InteractiveSession,
    jupyter: FakeJupyter,
) -> None:
    async with jupyter.client() as client:
        await check_idle(
            sessionmaker, DEFAULT_CLUSTER, fake, _watch(client), T0 + timedelta(hours=5)
        )

    row = await _reread(session, running)
    assert (row.idle_since, row.idle_ended_at) == (None, None)
    assert row.idle_checked_at == T0 + timedelta(hours=5)
    assert fake.jobs[next(iter(fake.jobs))].state == JobState.RUNNING


async def test_an_app_whose_definition_turns_idleness_off_is_never_asked(
    sessionmaker: async_sessionmaker[AsyncSession],
    fake: FakeScheduler,
    running: InteractiveSession,
) -> None:
    never = JUPYTER.model_copy(
        update={"idle": JUPYTER.idle.model_copy(update={"limit_minutes": 0})}
    )
    jupyter = FakeJupyter()
    async with jupyter.client() as client:
        calls = await check_idle(
            sessionmaker, DEFAULT_CLUSTER, fake, _watch(client, {"jupyterlab": never}), T0
        )

    assert (calls, jupyter.seen) == (0, [])


async def test_each_check_asks_a_fixed_number_of_sessions_those_asked_longest_ago_first(
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    world: World,
    fake: FakeScheduler,
) -> None:
    for n in range(3):
        row = await make_app_session(
            session, world.alice, world.physics, port=40000 + n, secret=SECRET, ready_at=T0,
            node=f"c{n}",
        )  # fmt: skip
        await _slurm_id(session, row, f"90{n}")
    ended = await make_app_session(
        session, world.alice, world.physics, state="completed", port=1, secret=SECRET,
        ready_at=T0, node="c9",
    )  # fmt: skip
    await _slurm_id(session, ended, "999")
    await session.commit()
    jupyter = FakeJupyter(last_activity=T0)
    async with jupyter.client() as client:
        watch = _watch(client, batch=2)
        for second in (1, 2, 3):
            await check_idle(
                sessionmaker, DEFAULT_CLUSTER, fake, watch, T0 + timedelta(seconds=second)
            )

    hosts = [r.url.host for r in jupyter.seen if r.url.path.endswith("/api/status")]
    # Two a check, the one never asked before the others; the ended session is never asked.
    assert len(hosts) == 6 and hosts[:3] == ["c0", "c1", "c2"]
    assert set(hosts) == {"c0", "c1", "c2"}


async def test_keeping_an_ended_session_is_refused(session: AsyncSession, world: World) -> None:
    row = await make_app_session(session, world.alice, world.physics, state="cancelled")
    await session.commit()
    session.expunge_all()
    alice = await as_actor(session, world.alice)

    with pytest.raises(Conflict):
        await service.keep(session, alice, row.id, T0)
