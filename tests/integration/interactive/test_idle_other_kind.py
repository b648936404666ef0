"""An app of another kind than JupyterLab, defined only by a file of a site's apps folder
(tests/fixtures/apps/tinyhttp.toml), is launched, reached and probed for idleness by the
portal's own code: its script runs for real (here, as the in-memory scheduler's job), its
server presents its secret in its own header and tells its activity at its own URL and field."""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.interactive import service
from app.interactive.connection import target_of
from app.interactive.definitions import load_definitions
from app.interactive.idle_check import IdleWatch, check_idle, load_watched, probe
from app.interactive.sessions import BASE_PATH, LaunchForm, state_of
from app.interactive.upstream import upstream_client
from app.jobs.service import JobService
from app.models.base import utc_now
from app.models.interactive import InteractiveSession
from app.poller.cycle import poll_cluster_once
from app.poller.reconcile import Grace
from app.scheduler.fake import FakeScheduler
from app.scheduler.states import JobState
from tests.factories import DEFAULT_CLUSTER, as_actor, fake_registry
from tests.world import World

APPS_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "apps"
TINY = load_definitions(APPS_DIR)["tinyhttp"]
LIMIT, WARNING = timedelta(seconds=40), timedelta(seconds=20)


@contextmanager
def running_script(script: str, environment: dict[str, str], folder: Path) -> Iterator[None]:
    """The app's job script run as the node would run it, stopped at the end of the block."""
    path = folder / "job.sh"
    path.write_text(script, encoding="utf-8")
    process = subprocess.Popen(
        ["bash", str(path)], env=os.environ | environment, stdout=subprocess.DEVNULL
    )
    try:
        yield
    finally:
        process.terminate()
        process.wait(timeout=10)


async def _file(path: Path, seconds: float = 20) -> bytes:
    deadline = asyncio.get_running_loop().time() + seconds
    while not path.exists():
        assert asyncio.get_running_loop().time() < deadline, f"{path} never appeared"
        await asyncio.sleep(0.05)
    return path.read_bytes()


async def test_an_app_of_another_kind_is_launched_reached_and_probed_by_the_same_code(
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    world: World,
    tmp_path: Path,
) -> None:
    fake = FakeScheduler(accounts={"alice": ["physics"]})
    jobs = JobService(sessionmaker, fake_registry(fake))
    alice = await as_actor(session, world.alice)
    form = LaunchForm(project_id=world.physics.id)
    row = await service.launch(session, alice, jobs, TINY, form, "/home/alice")
    await session.commit()
    (slurm_id,) = fake.jobs
    spec = fake.specs[slurm_id]
    fake.start(slurm_id)
    fake.set_state(slurm_id, JobState.RUNNING, nodes="127.0.0.1")
    await poll_cluster_once(sessionmaker, DEFAULT_CLUSTER, fake, grace=Grace(submit=timedelta(0)))
    await session.refresh(row, ["job"])
    connection = spec.environment["PORTAL_APP_CONNECTION"]
    # The node's file system is this machine's temporary folder.
    written = tmp_path / "connection.json"
    environment = dict(spec.environment) | {"PORTAL_APP_CONNECTION": str(written)}

    async with upstream_client() as client:
        with running_script(spec.script, environment, tmp_path):
            fake.files[connection] = await _file(written)
            await service.refresh(row, TINY, fake, "alice", client, utc_now())
            await session.commit()
            assert state_of(row) == "running"
            watch = IdleWatch({"tinyhttp": TINY}, client, LIMIT, WARNING, batch=5, every=1)

            (watched,) = await load_watched(sessionmaker, DEFAULT_CLUSTER, watch)
            started = await probe(watched, watch, fake, utc_now())
            # Someone uses the app, through its own header: its activity moves; asking its
            # status does not.
            target = target_of(row, TINY)
            assert target is not None
            used_at = utc_now()
            used = await client.get(
                f"http://{target.authority}{BASE_PATH.format(uuid=row.uuid)}page",
                headers={target.auth_header: target.auth_value},
            )
            active = await probe(watched, watch, fake, utc_now())
            again = await probe(watched, watch, fake, utc_now())
            # Then left alone: warned, then ended.
            await check_idle(sessionmaker, DEFAULT_CLUSTER, fake, watch, utc_now() + 25 * SECOND)
            warned = (await _reread(session, row)).idle_ends_at
            await check_idle(sessionmaker, DEFAULT_CLUSTER, fake, watch, utc_now() + 50 * SECOND)

    assert started is not None and active is not None and used.status_code == 200
    assert started < used_at - timedelta(milliseconds=1) < active == again
    assert warned is not None
    assert fake.jobs[slurm_id].state == JobState.CANCELLED
    ended = await _reread(session, row)
    assert ended.idle_ended_at is not None


SECOND = timedelta(seconds=1)


async def _reread(session: AsyncSession, row: InteractiveSession) -> InteractiveSession:
    found = await session.get(InteractiveSession, row.id, populate_existing=True)
    assert found is not None
    return found
