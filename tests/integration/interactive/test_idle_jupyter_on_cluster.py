"""An idle JupyterLab on each Slurm version's development cluster: the portal's poller asks
its server for its last activity, warns its owner (the sessions page, the API and their
webhook rule) and then ends it at the site's limit, as the owner's End would, its history
saying why. Short limits: warned after 20 s idle, ended at 40 s."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from app.config import Settings
from app.main import create_app
from app.models.notifications import NotificationRule
from app.security import hash_password
from tests.dev_apps import wait_for_jupyterlab
from tests.factories import add_member, make_project, make_user
from tests.integration.interactive.test_proxy import serve
from tests.integration.web.conftest import sign_in
from tests.notify_servers import Receiver, webhook_receiver
from tests.slurm_versions import cluster_config, clusters_file, release, versions

pytestmark = pytest.mark.slurm
STARTUP_SECONDS = 180
LIMIT_SECONDS, WARNING_SECONDS = 40, 20


@pytest.fixture(params=versions())
def slurm_version(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@dataclass
class Portal:
    url: str
    browser: httpx.AsyncClient
    project_id: int
    hooks: Receiver


@asynccontextmanager
async def idle_portal(
    slurm_version: str, clusters: Path, db_url: str, session: AsyncSession
) -> AsyncIterator[Portal]:
    """A portal on ``clusters`` whose site ends sessions idle 40 s, warning at 20 s; alice
    has a webhook rule for idle sessions, answered by a local receiver."""
    wait_for_jupyterlab(release(slurm_version))
    cluster = cluster_config(slurm_version).name
    alice = await make_user(
        session, "alice", cluster_username="alice", cluster=cluster,
        password_hash=hash_password("secret-pass"),
    )  # fmt: skip
    physics = await make_project(session, "physics", slurm_account="physics", cluster=cluster)
    await add_member(session, alice, physics)
    with webhook_receiver() as (hooks, url):
        session.add(
            NotificationRule(
                user_id=alice.id, event="session_idle", channel="webhook", webhook_url=url,
                secret="k" * 32,
            )
        )  # fmt: skip
        await session.commit()
        settings = Settings(
            env="dev", database_url=db_url, clusters_file=clusters, run_poller_in_web=True,
            poll_interval=1, webhook_allow_private=True, idle_limit=LIMIT_SECONDS,
            idle_warning=WARNING_SECONDS, idle_every=1,
        )  # fmt: skip
        app = create_app(settings)
        async with app.router.lifespan_context(app), serve(app) as port:
            base = f"http://127.0.0.1:{port}"
            async with httpx.AsyncClient(base_url=base, timeout=30) as browser:
                await sign_in(browser, "alice")
                yield Portal(base, browser, physics.id, hooks)


@pytest.fixture
async def portal(slurm_version: str, db_url: str, session: AsyncSession) -> AsyncIterator[Portal]:
    async with idle_portal(slurm_version, clusters_file(slurm_version), db_url, session) as portal:
        yield portal


async def _token(browser: httpx.AsyncClient) -> str:
    page = await browser.get("/settings/tokens")
    csrf = page.text.split('name="csrf_token" value="')[1].split('"')[0]
    data = {"csrf_token": csrf, "name": "idle", "scopes": ["read", "submit"],
            "expires_in_days": "1"}  # fmt: skip
    created = await browser.post("/settings/tokens", data=data)
    return created.text.split('id="new-token-secret" type="text" value="')[1].split('"')[0]


async def _until(
    check: Callable[[], Awaitable[dict[str, Any] | None]],
    seconds: float,
    what: str,
    every: float = 0.5,
) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    last: Any = None
    while loop.time() < deadline:
        last = await check()
        if last:
            return dict(last)
        await asyncio.sleep(every)
    raise AssertionError(f"no {what} within {seconds} s (last seen: {last})")


async def test_an_idle_jupyterlab_is_warned_then_ended_at_the_sites_limit(portal: Portal) -> None:
    await idle_jupyterlab_is_warned_then_ended(portal)


async def idle_jupyterlab_is_warned_then_ended(portal: Portal) -> None:
    """Launch JupyterLab, leave it: warned, the webhook told, then ended as by End."""
    csrf = await sign_in(portal.browser, "alice")
    form = {"csrf_token": csrf, "project_id": str(portal.project_id), "cores": "1",
            "memory_gb": "1", "time_minutes": "30"}  # fmt: skip
    assert (await portal.browser.post("/apps/jupyterlab", data=form)).status_code == 303
    headers = {"Authorization": f"Bearer {await _token(portal.browser)}"}

    async def session_state() -> dict[str, Any]:
        (found,) = (await portal.browser.get("/api/v1/sessions", headers=headers)).json()
        assert found["state"] != "ended" or found["ended_idle"], found
        return dict(found)

    async def running() -> dict[str, Any] | None:
        found = await session_state()
        return found if found["state"] == "running" else None

    async def warned() -> dict[str, Any] | None:
        found = await session_state()
        return found if found["idle_ends_at"] else None

    started = await _until(running, STARTUP_SECONDS, "running JupyterLab", every=1)
    warning = await _until(warned, LIMIT_SECONDS + 20, "idle warning")
    page = (await portal.browser.get("/apps")).text

    async def delivered() -> dict[str, Any] | None:
        requests = portal.hooks.requests
        return {"body": requests[0].body} if requests else None

    hook = json.loads((await _until(delivered, 30, "webhook for the warning"))["body"])

    async def ended() -> dict[str, Any] | None:
        job = (
            await portal.browser.get(f"/api/v1/jobs/{started['job_id']}", headers=headers)
        ).json()
        return job if job["is_finished"] else None

    job = await _until(ended, LIMIT_SECONDS + 60, "end of the idle session", every=1)
    events = (
        await portal.browser.get(f"/api/v1/jobs/{started['job_id']}/events", headers=headers)
    ).json()
    final = (await portal.browser.get(f"/api/v1/sessions/{started['id']}", headers=headers)).json()
    listing = (await portal.browser.get("/apps")).text

    assert "This session has been idle since" in page
    assert '>Keep it<span class="visually-hidden"> (JupyterLab)</span></button>' in page
    assert warning["idle_since"] is not None and warning["state"] == "running"
    assert (hook["event"], hook["job"]["id"]) == ("session_idle", started["job_id"])
    assert hook["session"]["ends_at"] is not None
    assert job["state"] == "cancelled"
    assert "ended: idle for 40 seconds" in [event["reason"] for event in events]
    assert final["ended_idle"] is True and final["state"] == "ended"
    assert "Ended: nobody used it" in listing
