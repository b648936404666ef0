"""Session use cases on both databases, with the in-memory scheduler standing in for Slurm:
launch as the user, learn the port from the job's file, readiness, owner only, end."""

from __future__ import annotations

import json
from datetime import timedelta

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.errors import NotFound, ValidationFailed
from app.interactive import service
from app.interactive.connection import BadConnection, parse_connection, target_of
from app.interactive.definitions import load_definitions
from app.interactive.sessions import LaunchForm, own_session, own_sessions, state_of
from app.jobs.service import JobService
from app.models.base import utc_now
from app.models.interactive import InteractiveSession
from app.poller.cycle import poll_cluster_once
from app.poller.reconcile import Grace
from app.scheduler.fake import FakeScheduler
from app.scheduler.states import JobState
from tests.factories import DEFAULT_CLUSTER, as_actor, fake_registry
from tests.world import World

JUPYTER = load_definitions()["jupyterlab"]
HOME = "/home/alice"
SECRET = "s3cr3t-" + "x" * 24
NO_WAIT = Grace(submit=timedelta(0))


@pytest.fixture
def fake() -> FakeScheduler:
    return FakeScheduler(accounts={"alice": ["physics"], "carol": ["physics"]})


@pytest.fixture
def jobs(sessionmaker: async_sessionmaker[AsyncSession], fake: FakeScheduler) -> JobService:
    return JobService(sessionmaker, fake_registry(fake))


def answering(status: int, seen: list[httpx.Request]) -> httpx.AsyncClient:
    def reply(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(status, json={})

    return httpx.AsyncClient(transport=httpx.MockTransport(reply))


async def _launch(
    session: AsyncSession, world: World, jobs: JobService, **fields: object
) -> InteractiveSession:
    alice = await as_actor(session, world.alice)
    form = LaunchForm(project_id=world.physics.id, **fields)  # type: ignore[arg-type]
    row = await service.launch(session, alice, jobs, JUPYTER, form, HOME)
    await session.commit()
    return row


async def _running_on(
    sessionmaker: async_sessionmaker[AsyncSession], fake: FakeScheduler, node: str
) -> None:
    (slurm_id,) = fake.jobs
    fake.start(slurm_id)
    fake.set_state(slurm_id, JobState.RUNNING, nodes=node)
    await poll_cluster_once(sessionmaker, DEFAULT_CLUSTER, fake, grace=NO_WAIT)


@pytest.fixture
async def started(
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    world: World,
    jobs: JobService,
    fake: FakeScheduler,
) -> InteractiveSession:
    """A session whose job Slurm now runs on c7."""
    return await _started(session, sessionmaker, world, jobs, fake)


async def _started(
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    world: World,
    jobs: JobService,
    fake: FakeScheduler,
    node: str = "c7",
) -> InteractiveSession:
    """A session whose job Slurm now runs on ``node``, as the poller recorded it."""
    row = await _launch(session, world, jobs)
    await _running_on(sessionmaker, fake, node)
    await session.refresh(row, ["job"])
    return row


async def test_a_launch_submits_the_apps_script_as_it_is_with_the_form_in_its_environment(
    session: AsyncSession, world: World, jobs: JobService, fake: FakeScheduler
) -> None:
    row = await _launch(session, world, jobs, cores=2, memory_gb=3, modules="python/3.11 gcc")

    (spec,) = fake.specs.values()
    folder = f"{HOME}/.hpcportal/sessions/{row.uuid}"
    assert spec.script == JUPYTER.script
    assert (spec.cpus_per_task, spec.memory_mb, spec.time_limit) == (2, 3072, 60)
    assert spec.environment == {
        "PORTAL_APP_BASE_URL": f"/apps/sessions/{row.uuid}/",
        "PORTAL_APP_CONNECTION": f"{folder}/connection.json",
        "PORTAL_APP_WORK_DIR": HOME,
        "PORTAL_APP_MODULES": "python/3.11 gcc",
        "PORTAL_APP_VENV": "",
    }
    assert spec.stdout == f"{folder}/output.log"
    assert (row.app, state_of(row), row.job.owner_user_id) == (
        "jupyterlab",
        "queued",
        world.alice.id,
    )
    assert row.values == {
        "project_id": world.physics.id,
        "cores": 2,
        "memory_gb": 3,
        "time_minutes": 60,
        "gpus": 0,
        "modules": "python/3.11 gcc",
    }


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"cores": 17}, "cores"),
        ({"time_minutes": 5}, "time_minutes"),
        ({"gpus": 1}, "gpus"),
        ({"modules": "python; rm -rf ~"}, "modules"),
        ({"venv": "relative/env"}, "venv"),
        ({"work_dir": "/home/alice\nrm"}, "work_dir"),
    ],
)
async def test_values_outside_what_the_app_allows_are_refused_before_anything_is_submitted(
    session: AsyncSession,
    world: World,
    jobs: JobService,
    fake: FakeScheduler,
    fields: dict[str, object],
    field: str,
) -> None:
    with pytest.raises(ValidationFailed) as refused:
        await _launch(session, world, jobs, **fields)

    assert field in refused.value.fields
    assert fake.specs == {}


async def test_the_session_runs_once_its_file_is_there_and_the_app_answers(
    started: InteractiveSession, fake: FakeScheduler
) -> None:
    row = started
    seen: list[httpx.Request] = []
    async with answering(200, seen) as client:
        await service.refresh(row, JUPYTER, fake, "alice", client, utc_now())
        assert (state_of(row), row.port) == ("starting", None)  # no file yet

        path = row.job.environment["PORTAL_APP_CONNECTION"]
        fake.files[path] = json.dumps({"port": 40123, "secret": SECRET, "host": "db"}).encode()
        await service.refresh(row, JUPYTER, fake, "alice", client, utc_now())

    assert (state_of(row), row.port, row.secret) == ("running", 40123, SECRET)
    # The host is the job's node from Slurm, never the file's.
    assert str(seen[0].url) == f"http://c7:40123/apps/sessions/{row.uuid}/api/status"
    assert seen[0].headers["authorization"] == f"token {SECRET}"
    target = target_of(row, JUPYTER)
    assert target is not None and (target.host, target.port) == ("c7", 40123)


async def test_an_app_that_does_not_answer_yet_keeps_the_session_starting(
    started: InteractiveSession, fake: FakeScheduler
) -> None:
    row = started
    fake.files[row.job.environment["PORTAL_APP_CONNECTION"]] = json.dumps(
        {"port": 40123, "secret": SECRET}
    ).encode()
    async with answering(503, []) as client:
        await service.refresh(row, JUPYTER, fake, "alice", client, utc_now())

    assert (state_of(row), row.port) == ("starting", 40123)


async def test_a_job_on_several_nodes_is_not_a_place_to_connect_to(
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    world: World,
    jobs: JobService,
    fake: FakeScheduler,
) -> None:
    row = await _started(session, sessionmaker, world, jobs, fake, node="c[1-2]")
    row.port, row.secret = 40123, SECRET

    assert target_of(row, JUPYTER) is None


@pytest.mark.parametrize(
    "data",
    [
        b"not json",
        b"[1, 2]",
        b'{"port": 80, "secret": "s3cr3t-xxxxxxxxxxxxxxxxxxxx"}',
        b'{"port": true, "secret": "s3cr3t-xxxxxxxxxxxxxxxxxxxx"}',
        b'{"port": 40000, "secret": "short"}',
        b'{"port": 40000, "secret": "has spaces and\\nnewlines in it"}',
    ],
)
def test_a_connection_file_that_is_not_the_scripts_is_refused(data: bytes) -> None:
    with pytest.raises(BadConnection):
        parse_connection(data)


async def test_only_the_owner_reaches_a_session_not_even_a_site_admin(
    session: AsyncSession, world: World, jobs: JobService
) -> None:
    row = await _launch(session, world, jobs)

    for other in (world.carol, world.admin):
        actor = await as_actor(session, other)
        with pytest.raises(NotFound):
            await own_session(session, actor, row.id)
        assert await own_sessions(session, actor) == []
    alice = await as_actor(session, world.alice)
    assert [s.id for s in await own_sessions(session, alice)] == [row.id]


async def test_ending_a_session_cancels_its_job_as_the_owner(
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    world: World,
    jobs: JobService,
    fake: FakeScheduler,
) -> None:
    row = await _launch(session, world, jobs)
    await _running_on(sessionmaker, fake, "c7")
    alice = await as_actor(session, world.alice)

    await service.end(jobs, alice, row)
    await poll_cluster_once(sessionmaker, DEFAULT_CLUSTER, fake, grace=NO_WAIT)
    await session.refresh(row, ["job"])

    (slurm_id,) = fake.jobs
    assert fake.jobs[slurm_id].state is JobState.CANCELLED
    assert state_of(row) == "ended"
    await service.end(jobs, alice, row)  # ending an ended session is not an error
