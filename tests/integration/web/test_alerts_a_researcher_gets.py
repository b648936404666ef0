"""Alerts a researcher can get on a site that sends no e-mail: the page says what is offered
and why, the browser is the channel chosen by default and follows each rule's event, and
no rule is offered that could never be followed."""

from __future__ import annotations

import httpx
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db import unit_of_work
from app.jobs import repository
from app.models.jobs import Job
from app.models.notifications import Notification
from app.notifications.outbox import StateChange, record_state_changes
from tests.factories import make_job
from tests.integration.web.conftest import sign_in
from tests.world import World

Maker = async_sessionmaker[AsyncSession]


async def _job(sessionmaker: Maker, world: World, **fields: object) -> Job:
    async with unit_of_work(sessionmaker) as session:
        return await make_job(session, world.alice, world.physics, **fields)  # type: ignore[arg-type]


async def test_without_a_mail_server_the_page_says_so_and_offers_this_browser_first(
    client: httpx.AsyncClient, world: World
) -> None:
    await sign_in(client, "alice")

    page = (await client.get("/settings/notifications")).text

    assert "What this site can send" in page
    assert "not offered: this site has no mail server set up." in page
    assert "this site refuses addresses on its own machine or private network." in page
    assert 'id="channel-browser" name="channel" value="browser" checked' in page
    assert 'value="webhook" checked' not in page and 'id="channel-email"' not in page
    assert "(this portal sends no e-mail)" not in page


async def test_a_browser_rule_shows_only_its_event_and_sends_nothing(
    client: httpx.AsyncClient, sessionmaker: Maker, world: World
) -> None:
    failed, completed = await _job(sessionmaker, world), await _job(sessionmaker, world)
    csrf = await sign_in(client, "alice")
    added = await client.post(
        "/settings/notifications",
        data={"csrf_token": csrf, "event": "failed", "scope": "all", "channel": "browser"},
    )
    start = (await client.get("/notifications/feed")).json()
    async with unit_of_work(sessionmaker) as session:
        for job, end in ((completed, "completed"), (failed, "failed")):
            repository.add_event(session, job.id, "running", end, reason=None, source="poller")
        changes = [
            StateChange(job.id, world.alice.id, "running", end, has_start_time=True)
            for job, end in ((completed, "completed"), (failed, "failed"))
        ]
        await record_state_changes(session, changes)
    feed = (await client.get(f"/notifications/feed?after={start['cursor']}")).json()
    async with sessionmaker() as session:
        queued = await session.scalar(select(func.count()).select_from(Notification))

    assert added.status_code == 201
    assert (
        "This browser will tell you when any of your jobs fails, while a portal tab is open."
        in added.text
    )
    assert [change["job_id"] for change in feed["changes"]] == [failed.id]
    assert queued == 0


async def test_an_ended_job_offers_no_alert_and_a_running_one_no_start(
    client: httpx.AsyncClient, sessionmaker: Maker, world: World
) -> None:
    ended = await _job(sessionmaker, world, state="completed", slurm_job_id="910")
    running = await _job(sessionmaker, world, state="running", slurm_job_id="911")
    csrf = await sign_in(client, "alice")

    ended_page = (await client.get(f"/jobs/{ended.id}")).text
    ended_notify = (await client.get(f"/jobs/{ended.id}/notify")).text
    refused = await client.post(
        f"/jobs/{ended.id}/notify",
        data={"csrf_token": csrf, "event": "ended", "channel": "browser"},
    )
    running_page = (await client.get(f"/jobs/{running.id}")).text
    running_notify = (await client.get(f"/jobs/{running.id}/notify")).text

    assert "Notify me…" not in ended_page and "Notify me…" in running_page
    assert "This job has ended: there is nothing left to tell you about it." in ended_notify
    assert '<select id="event"' not in ended_notify
    assert refused.status_code == 422
    assert '<option value="started"' not in running_notify
    assert '<option value="failed"' in running_notify


async def test_a_rule_for_one_job_takes_the_slurm_id_people_know(
    client: httpx.AsyncClient, sessionmaker: Maker, world: World
) -> None:
    job = await _job(sessionmaker, world, state="pending", slurm_job_id="912", name="sim")
    csrf = await sign_in(client, "alice")
    form = {"csrf_token": csrf, "event": "ended", "channel": "browser", "scope": "job"}

    page = (await client.get("/settings/notifications")).text
    added = await client.post("/settings/notifications", data=form | {"job_id": "912"})
    unknown = await client.post("/settings/notifications", data=form | {"job_id": "999999"})

    assert '<label for="scope-job">One job, Slurm id</label>' in page
    assert added.status_code == 201
    assert f'<a href="/jobs/{job.id}">sim</a>' in added.text
    assert unknown.status_code == 422
    assert "Give the Slurm id of one of your jobs, e.g. 905." in unknown.text
