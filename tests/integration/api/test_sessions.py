"""The apps and sessions API with the in-memory scheduler: launch, refusals, owner only, end."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import httpx
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models.base import utc_now
from app.models.interactive import InteractiveSession
from app.poller.cycle import poll_cluster_once
from app.scheduler.fake import FakeScheduler
from app.scheduler.states import JobState
from tests.factories import DEFAULT_CLUSTER
from tests.integration.api.conftest import issue_token
from tests.world import World


async def _launched(
    client: httpx.AsyncClient, session: AsyncSession, world: World, **fields: object
) -> tuple[dict[str, str], dict[str, Any]]:
    """Alice's token and the session she launched with ``fields``."""
    alice = await issue_token(session, world.alice)
    body = {"app": "jupyterlab", "project_id": world.physics.id, **fields}
    launched = await client.post("/api/v1/sessions", json=body, headers=alice)
    assert launched.status_code == 201, launched.text
    return alice, launched.json()


async def test_the_apps_are_listed_with_their_limits(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    headers = await issue_token(session, world.alice, ("read",))

    body = (await client.get("/api/v1/apps", headers=headers)).json()

    by_name = {app["name"]: app for app in body}
    assert sorted(by_name) == ["desktop", "jupyterlab"]
    assert by_name["jupyterlab"]["form"]["cores"] == {"default": 1, "min": 1, "max": 16}
    assert by_name["jupyterlab"]["form"]["gpus"]["max"] == 0
    assert by_name["desktop"]["title"] == "Desktop"


async def test_a_launch_is_a_job_of_the_user_and_its_session_is_theirs_alone(
    client: httpx.AsyncClient,
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    world: World,
    scheduler: FakeScheduler,
) -> None:
    alice, created = await _launched(client, session, world, cores=1, memory_gb=1)

    assert (created["state"], created["connect_url"], created["values"]["cores"]) == (
        "queued",
        None,
        1,
    )
    (spec,) = scheduler.specs.values()
    assert (spec.cpus_per_task, spec.memory_mb, spec.time_limit) == (1, 1024, 60)
    job = (await client.get(f"/api/v1/jobs/{created['job_id']}", headers=alice)).json()
    assert job["owner_user_id"] == world.alice.id
    for other in (world.carol, world.admin):
        scopes = ("read", "submit", "admin") if other.is_site_admin else ("read", "submit")
        headers = await issue_token(session, other, scopes)
        url = f"/api/v1/sessions/{created['id']}"
        assert (await client.get(url, headers=headers)).status_code == 404
        assert (await client.delete(url, headers=headers)).status_code == 404
        assert (await client.get("/api/v1/sessions", headers=headers)).json() == []


async def test_a_running_session_gives_its_connect_url_once_the_app_answers(
    client: httpx.AsyncClient,
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    world: World,
    scheduler: FakeScheduler,
) -> None:
    alice, created = await _launched(client, session, world)
    (slurm_id,) = scheduler.jobs
    scheduler.start(slurm_id)
    scheduler.set_state(slurm_id, JobState.RUNNING, nodes="127.0.0.1")
    await poll_cluster_once(sessionmaker, DEFAULT_CLUSTER, scheduler)
    (spec,) = scheduler.specs.values()
    record = {"port": 9, "secret": "x" * 20}  # nothing listens: the server is "starting"
    scheduler.files[spec.environment["PORTAL_APP_CONNECTION"]] = json.dumps(record).encode()

    found = (await client.get(f"/api/v1/sessions/{created['id']}", headers=alice)).json()

    assert found["state"] == "starting" and found["connect_url"] is None
    assert found["node"] == "127.0.0.1" and found["seconds_left"] is not None


async def test_values_outside_the_apps_limits_are_refused_by_field(
    client: httpx.AsyncClient, session: AsyncSession, world: World, scheduler: FakeScheduler
) -> None:
    alice = await issue_token(session, world.alice)
    body = {"app": "jupyterlab", "project_id": world.physics.id, "cores": 64, "gpus": 1}

    refused = await client.post("/api/v1/sessions", json=body, headers=alice)
    unknown = await client.post(
        "/api/v1/sessions", json={"app": "rstudio", "project_id": 1}, headers=alice
    )
    elsewhere = await client.post(
        "/api/v1/sessions",
        json={"app": "jupyterlab", "project_id": world.chemistry.id},
        headers=alice,
    )

    assert refused.status_code == 422
    assert refused.json()["fields"] == {
        "cores": "choose 1 to 16 cores",
        "gpus": "choose 0 to 0 GPUs",
    }
    assert (unknown.status_code, unknown.json()["detail"]) == (404, "No app named rstudio.")
    assert elsewhere.status_code == 422 and "project_id" in elsewhere.json()["fields"]
    assert scheduler.specs == {}


async def test_ending_a_session_cancels_its_job(
    client: httpx.AsyncClient, session: AsyncSession, world: World, scheduler: FakeScheduler
) -> None:
    alice, created = await _launched(client, session, world)
    (slurm_id,) = scheduler.jobs
    scheduler.start(slurm_id)

    ended = await client.delete(f"/api/v1/sessions/{created['id']}", headers=alice)
    shown = await client.get(f"/api/v1/sessions/{created['id']}", headers=alice)

    assert ended.status_code == 200, ended.text
    assert scheduler.jobs[slurm_id].state is JobState.CANCELLED
    # Until the poller has seen the job end, the session says it is ending, not running.
    assert (created["end_requested"], ended.json()["end_requested"]) == (False, True)
    assert shown.json()["end_requested"] is True and shown.json()["connect_url"] is None


async def test_a_warned_session_says_until_when_and_keep_starts_its_idle_clock_again(
    client: httpx.AsyncClient,
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    world: World,
    scheduler: FakeScheduler,
) -> None:
    alice, created = await _launched(client, session, world)
    (slurm_id,) = scheduler.jobs
    scheduler.start(slurm_id)
    scheduler.set_state(slurm_id, JobState.RUNNING, nodes="c7")
    await poll_cluster_once(sessionmaker, DEFAULT_CLUSTER, scheduler)
    now = utc_now()
    async with sessionmaker() as db:
        row = await db.get(InteractiveSession, created["id"])
        assert row is not None
        row.port, row.secret, row.ready_at = 40123, "x" * 24, now
        row.idle_since, row.idle_warned_at = now - timedelta(minutes=45), now
        row.idle_ends_at = now + timedelta(minutes=15)
        await db.commit()
    bob = await issue_token(session, world.bob)

    warned = (await client.get(f"/api/v1/sessions/{created['id']}", headers=alice)).json()
    not_bobs = await client.post(f"/api/v1/sessions/{created['id']}/keep", headers=bob)
    kept = await client.post(f"/api/v1/sessions/{created['id']}/keep", headers=alice)

    assert warned["state"] == "running" and warned["idle_ends_at"] is not None
    assert warned["idle_since"] is not None and warned["ended_idle"] is False
    assert not_bobs.status_code == 404
    assert kept.status_code == 200, kept.text
    assert (kept.json()["idle_since"], kept.json()["idle_ends_at"]) == (None, None)


async def test_a_desktops_owner_shares_it_with_a_colleague_and_revokes_them(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    alice, desktop = await _launched(client, session, world, app="desktop")
    _, lab = await _launched(client, session, world)
    bob = await issue_token(session, world.bob)
    viewers = f"/api/v1/sessions/{desktop['id']}/viewers"

    shared = await client.post(viewers, json={"login": "carol"}, headers=alice)
    again = await client.post(viewers, json={"login": "carol"}, headers=alice)
    listed = await client.get(viewers, headers=alice)
    nobody = await client.post(viewers, json={"login": "nobody"}, headers=alice)
    herself = await client.post(viewers, json={"login": "alice"}, headers=alice)
    a_lab = await client.post(
        f"/api/v1/sessions/{lab['id']}/viewers", json={"login": "carol"}, headers=alice
    )
    by_bob = await client.post(viewers, json={"login": "bob"}, headers=bob)
    bob_lists = await client.get(viewers, headers=bob)
    viewer = shared.json()["id"]
    bob_revokes = await client.delete(f"{viewers}/{viewer}", headers=bob)
    still = (await client.get(viewers, headers=alice)).json()
    revoked = await client.delete(f"{viewers}/{viewer}", headers=alice)
    after = (await client.get(viewers, headers=alice)).json()

    assert shared.status_code == 201, shared.text
    assert (shared.json()["login"], again.json()["id"]) == ("carol", viewer)  # not twice
    assert [v["login"] for v in listed.json()] == ["carol"]
    assert nobody.status_code == 422
    assert nobody.json()["fields"]["login"] == "no portal user signs in as nobody"
    assert herself.status_code == 422 and a_lab.status_code == 422
    assert a_lab.json()["detail"] == "Only a desktop can be shown to someone else."
    # Another user's session does not exist for them, whatever they try.
    assert (by_bob.status_code, bob_lists.status_code) == (404, 404)
    assert bob_revokes.status_code == 404 and [v["login"] for v in still] == ["carol"]
    assert revoked.status_code == 204 and after == []
