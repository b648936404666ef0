"""The Notifications page, a job's "Notify me" page and the browser notifications feed."""

from __future__ import annotations

import re

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.config import Settings
from app.db import unit_of_work
from app.jobs import repository
from app.models import Job
from tests.factories import make_job
from tests.integration.web.conftest import sign_in
from tests.world import World

SECRET = re.compile(r'id="new-rule-secret"[^>]*value="([^"]+)"')


@pytest.fixture
def settings(db_url: str) -> Settings:
    return Settings(env="dev", database_url=db_url, run_poller_in_web=False, smtp_host="mail")


async def _job(sessionmaker: async_sessionmaker[AsyncSession], world: World) -> Job:
    async with unit_of_work(sessionmaker) as session:
        return await make_job(session, world.alice, world.physics, state="running", name="sim")


async def test_page_is_in_the_menu_and_adds_an_email_rule(
    client: httpx.AsyncClient, world: World
) -> None:
    csrf = await sign_in(client, "alice")
    page = await client.get("/settings/notifications")
    assert page.status_code == 200
    assert 'href="/settings/notifications" aria-current="page">Notifications<' in page.text
    added = await client.post(
        "/settings/notifications",
        data={"csrf_token": csrf, "event": "failed", "scope": "all", "channel": "email"},
    )
    assert added.status_code == 201
    assert "You will be told by e-mail when any of your jobs fails." in added.text
    assert "alice@example.org" in added.text
    assert "Nothing sent yet." in added.text


async def test_a_loopback_webhook_is_refused_with_the_reason(
    client: httpx.AsyncClient, world: World
) -> None:
    csrf = await sign_in(client, "alice")
    refused = await client.post(
        "/settings/notifications",
        data={
            "csrf_token": csrf,
            "event": "ended",
            "scope": "all",
            "channel": "webhook",
            "webhook_url": "http://127.0.0.1:8000/admin",
        },
    )
    assert refused.status_code == 422
    assert (
        "127.0.0.1 is a private, loopback or link-local address; webhooks go only to public "
        "addresses." in refused.text
    )


async def test_notify_me_on_a_job_page_adds_a_rule_for_that_job(
    client: httpx.AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], world: World
) -> None:
    job = await _job(sessionmaker, world)
    csrf = await sign_in(client, "alice")
    detail = await client.get(f"/jobs/{job.id}")
    assert f'href="/jobs/{job.id}/notify">Notify me…</a>' in detail.text
    form = await client.get(f"/jobs/{job.id}/notify")
    assert form.status_code == 200 and "Notify me about sim" in form.text
    added = await client.post(
        f"/jobs/{job.id}/notify", data={"csrf_token": csrf, "event": "ended", "channel": "email"}
    )
    assert added.status_code == 201
    assert "You will be told by e-mail when this job ends (in any way)." in added.text
    rule_id = re.search(r"/settings/notifications/(\d+)/delete\?job=", added.text)
    assert rule_id is not None
    deleted = await client.post(
        f"/settings/notifications/{rule_id.group(1)}/delete?job={job.id}",
        data={"csrf_token": csrf},
    )
    assert (deleted.status_code, deleted.headers["location"]) == (303, f"/jobs/{job.id}/notify")


async def test_someone_elses_job_has_no_notify_page(
    client: httpx.AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], world: World
) -> None:
    job = await _job(sessionmaker, world)
    await sign_in(client, "bob")
    assert (await client.get(f"/jobs/{job.id}/notify")).status_code == 404


async def test_the_feed_gives_own_job_changes_after_the_cursor(
    client: httpx.AsyncClient, sessionmaker: async_sessionmaker[AsyncSession], world: World
) -> None:
    job = await _job(sessionmaker, world)
    await sign_in(client, "alice")
    start = (await client.get("/notifications/feed")).json()
    assert start["changes"] == []
    async with unit_of_work(sessionmaker) as session:
        repository.add_event(session, job.id, "running", "completed", reason=None, source="poller")
        other = await make_job(session, world.bob, world.chemistry, state="running")
        repository.add_event(session, other.id, "running", "failed", reason=None, source="poller")
    feed = (await client.get(f"/notifications/feed?after={start['cursor']}")).json()
    assert feed["changes"] == [
        {"job_id": job.id, "name": "sim", "slurm_job_id": None, "state": "completed"}
    ]
    assert (await client.get(f"/notifications/feed?after={feed['cursor']}")).json()["changes"] == []
