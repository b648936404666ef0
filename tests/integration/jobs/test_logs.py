"""The logs service: who may read a job's output, paging, and following a live file."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.errors import NotFound, ValidationFailed
from app.jobs.logs import LogChunk, follow_log, read_log
from app.models.jobs import Job
from app.scheduler.base import SchedulerAdapter
from app.scheduler.config import load_clusters
from app.scheduler.fake import FakeScheduler
from app.scheduler.registry import build_adapter
from app.scheduler.types import JobSpec
from app.users.actor import Actor
from tests.factories import add_member, as_actor, make_job, make_project, make_user

CLUSTERS_FILE = os.environ.get("PORTAL_CLUSTERS_FILE", "/var/lib/hpcportal-dev/clusters.toml")
LINES_SCRIPT = '#!/bin/bash\nfor i in $(seq 1 {count}); do echo "line $i"; sleep {pause}; done\n'


async def _arrange(session: AsyncSession, state: str = "running") -> tuple[Job, dict[str, Actor]]:
    physics = await make_project(session, "Physics", slurm_account="physics")
    alice = await make_user(session, "alice", cluster_username="alice")
    bob = await make_user(session, "bob", cluster_username="bob")
    carol = await make_user(session, "carol", cluster_username="carol")
    dave = await make_user(session, "dave", cluster_username="dave")
    await add_member(session, alice, physics)
    await add_member(session, carol, physics)
    chemistry = await make_project(session, "Chemistry", slurm_account="chemistry")
    await add_member(session, bob, chemistry)
    await add_member(session, dave, chemistry, role="manager")
    admin = await make_user(session, "root-admin", is_site_admin=True)
    job = await make_job(
        session,
        alice,
        physics,
        state=state,
        slurm_job_id="77",
        stdout_path="/scratch/alice/out-%j.txt",
    )
    await session.commit()
    users = {"alice": alice, "bob": bob, "carol": carol, "dave": dave, "admin": admin}
    return job, {name: await as_actor(session, user) for name, user in users.items()}


def _fake_with(content: bytes) -> FakeScheduler:
    fake = FakeScheduler()
    fake.files["/scratch/alice/out-77.txt"] = content
    return fake


async def test_owner_reads_a_page_of_the_expanded_log_path(
    session: AsyncSession, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    job, users = await _arrange(session)
    fake = _fake_with(b"0123456789")

    chunk = await read_log(
        sessionmaker, {"testcluster": fake}, users["alice"], job.id, "stdout", 2, 5
    )

    assert (chunk.data, chunk.offset, chunk.next_offset, chunk.size) == (b"23456", 2, 7, 10)
    assert not chunk.eof


async def test_stderr_falls_back_to_the_stdout_file_when_not_separate(
    session: AsyncSession, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    job, users = await _arrange(session)
    fake = _fake_with(b"both streams")

    chunk = await read_log(sessionmaker, {"testcluster": fake}, users["alice"], job.id, "stderr")

    assert chunk.text == "both streams"


@pytest.mark.parametrize("who", ["carol", "admin"])
async def test_project_colleague_and_site_admin_read_a_members_log(
    session: AsyncSession, sessionmaker: async_sessionmaker[AsyncSession], who: str
) -> None:
    job, users = await _arrange(session)
    fake = _fake_with(b"visible")

    chunk = await read_log(sessionmaker, {"testcluster": fake}, users[who], job.id)

    assert chunk.text == "visible"


@pytest.mark.parametrize("who", ["bob", "dave"])
async def test_user_or_manager_of_another_project_cannot_read_the_log(
    session: AsyncSession, sessionmaker: async_sessionmaker[AsyncSession], who: str
) -> None:
    job, users = await _arrange(session)
    fake = _fake_with(b"secret")

    with pytest.raises(NotFound):
        await read_log(sessionmaker, {"testcluster": fake}, users[who], job.id)
    assert "read_file" not in fake.calls


async def test_user_cannot_follow_another_users_log(
    session: AsyncSession, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    job, users = await _arrange(session)
    fake = _fake_with(b"secret")

    with pytest.raises(NotFound):
        async for _ in follow_log(sessionmaker, {"testcluster": fake}, users["bob"], job.id):
            pass


async def test_page_larger_than_the_maximum_is_refused(
    session: AsyncSession, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    job, users = await _arrange(session)

    with pytest.raises(ValidationFailed):
        await read_log(
            sessionmaker, {"testcluster": _fake_with(b"")}, users["alice"], job.id, limit=10**9
        )


async def test_missing_file_reads_as_an_empty_missing_chunk(
    session: AsyncSession, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    job, users = await _arrange(session)

    chunk = await read_log(sessionmaker, {"testcluster": FakeScheduler()}, users["alice"], job.id)

    assert chunk.is_missing and chunk.data == b""


async def test_follow_of_a_finished_job_sends_the_rest_of_the_file_and_stops(
    session: AsyncSession, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    job, users = await _arrange(session, state="completed")
    fake = _fake_with(b"a\n" * 70_000)

    chunks = [
        c
        async for c in follow_log(
            sessionmaker, {"testcluster": fake}, users["alice"], job.id, offset=4
        )
    ]

    assert b"".join(c.data for c in chunks) == b"a\n" * 69_998
    assert all(len(c.data) <= 64 * 1024 for c in chunks)


# --- against the real cluster -------------------------------------------------------------


@pytest.fixture
async def cluster_adapter() -> AsyncIterator[SchedulerAdapter]:
    config = load_clusters(CLUSTERS_FILE)["testcluster"]
    adapter = build_adapter(config, "ssh")
    yield adapter
    await adapter.close()


async def _submit_lines(adapter: SchedulerAdapter, count: int, pause: float) -> str:
    spec = JobSpec(
        script=LINES_SCRIPT.format(count=count, pause=pause),
        name="log-lines",
        account="physics",
        time_limit=5,
        memory_mb=100,
        stdout="/scratch/alice/portal-test-%j.out",
    )
    return await adapter.submit(spec, "alice")


async def _real_job(session: AsyncSession, slurm_id: str) -> tuple[Job, Actor]:
    physics = await make_project(session, "Physics", slurm_account="physics")
    alice = await make_user(session, "alice", cluster_username="alice")
    await add_member(session, alice, physics)
    job = await make_job(
        session,
        alice,
        physics,
        state="running",
        slurm_job_id=slurm_id,
        stdout_path="/scratch/alice/portal-test-%j.out",
    )
    await session.commit()
    return job, await as_actor(session, alice)


async def _mark(sessionmaker: async_sessionmaker[AsyncSession], job_id: int, state: str) -> None:
    async with sessionmaker() as session:
        await session.execute(update(Job).where(Job.id == job_id).values(state=state))
        await session.commit()


@pytest.mark.slurm
async def test_follow_delivers_lines_while_the_job_writes_them_and_ends_when_done(
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    cluster_adapter: SchedulerAdapter,
) -> None:
    slurm_id = await _submit_lines(cluster_adapter, count=6, pause=0.5)
    job, alice = await _real_job(session, slurm_id)
    received: list[LogChunk] = []
    arrivals: list[float] = []
    async for chunk in follow_log(
        sessionmaker, {"testcluster": cluster_adapter}, alice, job.id, interval=0.2
    ):
        received.append(chunk)
        arrivals.append(time.monotonic())
        if b"line 6" in chunk.data:
            await _mark(sessionmaker, job.id, "completed")

    text = b"".join(c.data for c in received).decode()
    assert text.splitlines() == [f"line {i}" for i in range(1, 7)]
    # Lines arrive as written (several deliveries spread over the run), not all at the end.
    assert len(received) >= 3
    assert arrivals[-1] - arrivals[0] >= 1.0


@pytest.mark.slurm
async def test_follow_resumes_from_an_offset_and_paging_covers_the_whole_file(
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    cluster_adapter: SchedulerAdapter,
) -> None:
    slurm_id = await _submit_lines(cluster_adapter, count=3000, pause=0)
    job, alice = await _real_job(session, slurm_id)
    expected = "".join(f"line {i}\n" for i in range(1, 3001)).encode()
    adapters = {"testcluster": cluster_adapter}
    deadline = time.monotonic() + 60
    while (await read_log(sessionmaker, adapters, alice, job.id)).size < len(expected):
        assert time.monotonic() < deadline, "the job did not write its output in time"
        await asyncio.sleep(0.2)
    await _mark(sessionmaker, job.id, "completed")

    pages, offset = [], 0
    while True:
        page = await read_log(sessionmaker, adapters, alice, job.id, offset=offset, limit=4096)
        pages.append(page.data)
        offset = page.next_offset
        if page.eof:
            break
    resumed = [c async for c in follow_log(sessionmaker, adapters, alice, job.id, offset=7)]

    assert b"".join(pages) == expected
    assert len(pages) == -(-len(expected) // 4096)
    assert b"".join(c.data for c in resumed) == expected[7:]
