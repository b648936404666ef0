"""The Notifications page, a job's "Notify me" page and the browser notifications feed."""

from __future__ import annotations

import html
import re

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.config import Settings
from app.db import unit_of_work
from app.jobs import repository
from app.models.base import utc_now
from app.models.jobs import Job
from app.models.notifications import DeliveryAttempt, Notification
from tests.factories import make_job
from tests.integration.notifications.conftest import add_rule
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


# An IPv4 address carried in IPv6 (compatible, NAT64, 6to4) is judged by that IPv4 address.
@pytest.mark.parametrize(
    "host", ["[::127.0.0.1]:8000", "[64:ff9b::169.254.169.254]", "[2002:a9fe:a9fe::1]"]
)
async def test_an_ipv4_address_carried_in_ipv6_is_refused_as_that_address(
    client: httpx.AsyncClient, world: World, host: str
) -> None:
    csrf = await sign_in(client, "alice")
    form = {"csrf_token": csrf, "event": "ended", "scope": "all", "channel": "webhook"}
    refused = await client.post(
        "/settings/notifications",
        data=form | {"webhook_url": f"http://{host}/latest/meta-data/"},
    )
    assert refused.status_code == 422
    assert (
        "is a private, loopback or link-local address; webhooks go only to public addresses."
        in refused.text
    )


async def test_a_host_name_with_no_ascii_form_is_refused_in_the_readers_language(
    client: httpx.AsyncClient, world: World
) -> None:
    csrf = await sign_in(client, "alice")
    form = {"csrf_token": csrf, "event": "ended", "scope": "all", "channel": "webhook"}
    refused = await client.post(
        "/settings/notifications",
        data=form | {"webhook_url": "https://exa mple.org/in"},
        headers={"Accept-Language": "fr"},
    )
    assert refused.status_code == 422
    assert "exa mple.org n&#39;est pas un nom d&#39;hôte valide" in refused.text


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


async def test_a_manager_asks_for_allocation_warnings(
    client: httpx.AsyncClient, world: World
) -> None:
    csrf = await sign_in(client, "alice")
    page = await client.get("/settings/notifications")
    assert "(not a job) a project I manage has used 80 %, then 95 %, of its allocation" in page.text
    added = await client.post(
        "/settings/notifications",
        data={"csrf_token": csrf, "event": "allocation", "scope": "all", "channel": "email"},
    )
    assert added.status_code == 201
    assert (
        "You will be told by e-mail when a project you manage has used 80 % and again 95 % of "
        "its allocation."
    ) in added.text


async def test_the_delivery_log_shows_the_newest_ten_and_pages_to_older_ones(
    client: httpx.AsyncClient, world: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    job = await _job(sessionmaker, world)
    rule = await add_rule(sessionmaker, world.alice, "ended")
    async with unit_of_work(sessionmaker) as session:
        sent = Notification(
            rule_id=rule.id,
            user_id=world.alice.id,
            job_id=job.id,
            event="ended",
            job_state="completed",
        )
        session.add(sent)
        await session.flush()
        session.add_all(
            DeliveryAttempt(
                notification_id=sent.id,
                user_id=world.alice.id,
                attempt=number,
                at=utc_now(),
                channel="email",
                is_success=False,
                error="refused",
            )
            for number in range(1, 13)
        )
    await sign_in(client, "alice")
    attempt = re.compile(r'<td data-label="Attempt">(\d+)</td>')

    newest = await client.get("/settings/notifications")
    older = re.search(r'<a href="([^"]+)" rel="next">Older deliveries</a>', newest.text)
    assert older is not None and "Newer deliveries" not in newest.text
    rest = await client.get(html.unescape(older[1]))

    assert attempt.findall(newest.text) == [str(n) for n in range(12, 2, -1)]
    assert attempt.findall(rest.text) == ["2", "1"]
    assert "Older deliveries" not in rest.text and "Newer deliveries" in rest.text
