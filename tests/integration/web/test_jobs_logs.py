"""Log pages, downloads and the live tail (SSE), with a fake cluster and the real one."""

from __future__ import annotations

import asyncio
import os
import time

import fastapi.routing
import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models.jobs import Job
from app.scheduler.config import load_clusters
from app.scheduler.fake import FakeScheduler
from app.scheduler.registry import SchedulerRegistry, Schedulers
from app.scheduler.types import JobSpec
from app.wiring import services_of
from tests.factories import fake_registry, make_job
from tests.integration.web.conftest import sign_in
from tests.world import World

CLUSTERS_FILE = os.environ.get("PORTAL_CLUSTERS_FILE", "/var/lib/hpcportal-dev/clusters.toml")


def parse_events(body: str) -> list[tuple[int | None, str, str]]:
    """(id, name, data) for each event, data lines joined the way browsers join them;
    comment lines (keep-alive pings) are skipped, as browsers do."""
    events = []
    for block in body.split("\n\n"):
        fields: dict[str, list[str]] = {}
        for line in block.split("\n"):
            name, _, value = line.partition(": ")
            if line and not line.startswith(":"):
                fields.setdefault(name, []).append(value)
        if "event" in fields:
            event_id = fields.get("id", [""])[0]
            text = "\n".join(fields.get("data", []))
            events.append((int(event_id) if event_id else None, fields["event"][0], text))
    return events


@pytest.fixture
def fake() -> FakeScheduler:
    return FakeScheduler()


@pytest.fixture
def registry(request: pytest.FixtureRequest, fake: FakeScheduler) -> SchedulerRegistry:
    """The real development cluster for tests marked ``slurm``, else the fake one."""
    if request.node.get_closest_marker("slurm"):
        return SchedulerRegistry(load_clusters(CLUSTERS_FILE))
    return fake_registry(fake)


async def _job(
    sessionmaker: async_sessionmaker[AsyncSession], people: World, state: str, slurm_id: str
) -> Job:
    async with sessionmaker() as session:
        job = await make_job(
            session,
            people.alice,
            people.physics,
            state=state,
            slurm_job_id=slurm_id,
            stdout_path="/scratch/alice/portal-web-test-%j.out",
        )
        await session.commit()
    return job


async def test_every_line_of_a_log_event_is_its_own_data_field_and_the_stream_is_not_stored(
    client: httpx.AsyncClient,
    people: World,
    sessionmaker: async_sessionmaker[AsyncSession],
    fake: FakeScheduler,
) -> None:
    job = await _job(sessionmaker, people, "completed", "6")
    fake.files["/scratch/alice/portal-web-test-6.out"] = b"a\r\nb\n"
    await sign_in(client, "alice")

    response = await client.get(f"/jobs/{job.id}/logs/stdout/stream", params={"offset": 0})

    assert "event: log\ndata: a\ndata: b\ndata: \nid: 5\n\n" in response.text
    assert response.text.endswith("event: end\ndata: \n\n")
    assert response.headers["cache-control"] == "no-store"


async def test_log_page_shows_one_page_with_links_to_its_neighbours(
    client: httpx.AsyncClient,
    people: World,
    sessionmaker: async_sessionmaker[AsyncSession],
    fake: FakeScheduler,
) -> None:
    job = await _job(sessionmaker, people, "completed", "5")
    fake.files["/scratch/alice/portal-web-test-5.out"] = b"".join(
        f"row {n:03d}\n".encode() for n in range(100)
    )
    await sign_in(client, "alice")

    page = await client.get(f"/jobs/{job.id}/logs/stdout", params={"offset": 80, "limit": 80})

    assert "row 010" in page.text and "row 019" in page.text and "row 020" not in page.text
    assert f"/jobs/{job.id}/logs/stdout?offset=0&amp;limit=80" in page.text
    assert f"/jobs/{job.id}/logs/stdout?offset=160&amp;limit=80" in page.text


async def test_log_download_streams_the_whole_file(
    client: httpx.AsyncClient,
    people: World,
    sessionmaker: async_sessionmaker[AsyncSession],
    fake: FakeScheduler,
) -> None:
    job = await _job(sessionmaker, people, "completed", "6")
    content = b"x" * 200_000 + b"\nend\n"
    fake.files["/scratch/alice/portal-web-test-6.out"] = content
    await sign_in(client, "alice")

    response = await client.get(f"/jobs/{job.id}/logs/stdout/download")

    assert response.content == content
    assert "attachment" in response.headers["content-disposition"]


async def test_stream_of_a_finished_job_sends_escaped_text_then_ends(
    client: httpx.AsyncClient,
    people: World,
    sessionmaker: async_sessionmaker[AsyncSession],
    fake: FakeScheduler,
) -> None:
    job = await _job(sessionmaker, people, "completed", "7")
    fake.files["/scratch/alice/portal-web-test-7.out"] = b"<b>bold</b>\nsecond\n"
    await sign_in(client, "alice")

    response = await client.get(f"/jobs/{job.id}/logs/stdout/stream", params={"offset": 0})
    events = parse_events(response.text)

    assert response.headers["content-type"].startswith("text/event-stream")
    assert events[0] == (19, "log", "&lt;b&gt;bold&lt;/b&gt;\nsecond\n")
    assert events[-1][1] == "end"


async def test_stream_resumes_from_the_last_event_id(
    client: httpx.AsyncClient,
    people: World,
    sessionmaker: async_sessionmaker[AsyncSession],
    fake: FakeScheduler,
) -> None:
    job = await _job(sessionmaker, people, "completed", "8")
    fake.files["/scratch/alice/portal-web-test-8.out"] = b"first\nsecond\n"
    await sign_in(client, "alice")

    response = await client.get(
        f"/jobs/{job.id}/logs/stdout/stream", headers={"Last-Event-ID": "6"}
    )

    assert parse_events(response.text)[0] == (13, "log", "second\n")


async def test_stream_without_an_offset_opens_on_the_end_of_a_long_file(
    client: httpx.AsyncClient,
    people: World,
    sessionmaker: async_sessionmaker[AsyncSession],
    fake: FakeScheduler,
) -> None:
    job = await _job(sessionmaker, people, "completed", "9")
    fake.files["/scratch/alice/portal-web-test-9.out"] = b"a" * 100_000 + b"\nlast line\n"
    await sign_in(client, "alice")

    response = await client.get(f"/jobs/{job.id}/logs/stdout/stream")
    events = parse_events(response.text)

    assert "earlier bytes not shown" in events[0][2]
    assert sum(len(text) for _, name, text in events[1:] if name == "log") == 64 * 1024
    assert events[-2][2].endswith("last line\n")


async def test_a_quiet_running_job_gets_keep_alive_pings_until_it_ends(
    client: httpx.AsyncClient,
    people: World,
    sessionmaker: async_sessionmaker[AsyncSession],
    fake: FakeScheduler,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Proxies cut a stream that sends nothing for a minute; the framework pings every 15 s,
    # shortened here.
    monkeypatch.setattr(fastapi.routing, "_PING_INTERVAL", 0.2)
    job = await _job(sessionmaker, people, "running", "10")
    fake.files["/scratch/alice/portal-web-test-10.out"] = b""
    await sign_in(client, "alice")

    async def end_later() -> None:
        await asyncio.sleep(1.0)
        async with sessionmaker() as session:
            await session.execute(update(Job).where(Job.id == job.id).values(state="completed"))
            await session.commit()

    ender = asyncio.create_task(end_later())
    response = await client.get(f"/jobs/{job.id}/logs/stdout/stream", params={"offset": 0})
    await ender

    assert response.text.count(": ping\n\n") >= 3
    assert parse_events(response.text) == [(None, "end", "")]


# --- against the real cluster -------------------------------------------------------------


@pytest.fixture
def cluster(app: FastAPI) -> Schedulers:
    return services_of(app).schedulers


async def _mark_completed_when_written(
    sessionmaker: async_sessionmaker[AsyncSession], registry: Schedulers, job: Job, size: int
) -> None:
    adapter = registry.get("testcluster")
    path = f"/scratch/alice/portal-web-test-{job.slurm_job_id}.out"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if (await adapter.read_file(path, 0, 1, "alice")).size >= size:
                break
        except Exception:
            pass
        await asyncio.sleep(0.2)
    async with sessionmaker() as session:
        await session.execute(update(Job).where(Job.id == job.id).values(state="completed"))
        await session.commit()


@pytest.mark.slurm
async def test_live_stream_follows_a_running_job_and_resumes_from_an_offset(
    client: httpx.AsyncClient,
    people: World,
    sessionmaker: async_sessionmaker[AsyncSession],
    cluster: Schedulers,
) -> None:
    spec = JobSpec(
        script='#!/bin/bash\nfor i in $(seq 1 8); do echo "tick $i"; sleep 0.3; done\n',
        name="sse-lines",
        account="physics",
        time_limit=5,
        memory_mb=100,
        stdout="/scratch/alice/portal-web-test-%j.out",
    )
    slurm_id = await cluster.get("testcluster").submit(spec, "alice")
    job = await _job(sessionmaker, people, "running", slurm_id)
    expected = "".join(f"tick {i}\n" for i in range(1, 9))
    await sign_in(client, "alice")

    url = f"/jobs/{job.id}/logs/stdout/stream"
    response, _ = await asyncio.gather(
        client.get(url, params={"offset": 0}, timeout=90),
        _mark_completed_when_written(sessionmaker, cluster, job, len(expected)),
    )
    events = [e for e in parse_events(response.text) if e[1] == "log"]
    resumed = await client.get(url, headers={"Last-Event-ID": str(events[0][0])})

    assert "".join(text for _, _, text in events) == expected
    assert [event_id for event_id, _, _ in events] == sorted(e[0] for e in events)  # type: ignore[type-var]
    assert events[-1][0] == len(expected)
    first_end = events[0][0] or 0
    resumed_text = "".join(t for _, n, t in parse_events(resumed.text) if n == "log")
    assert resumed_text == expected[first_end:]
