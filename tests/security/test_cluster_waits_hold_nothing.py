"""A request waiting on a cluster holds no database resource, on SQLite and PostgreSQL.

Every route that calls the cluster is sent while the cluster's answer is held back at a gate;
meanwhile no pooled connection may be checked out, and another user signs in and ``/healthz``
answers promptly. The waiting user's web session is old enough to be touched ("last seen"),
so a request that wrote that touch through its own session would hold SQLite's write lock.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession

from app.models.base import utc_now
from app.models.jobs import Job
from app.models.web_sessions import WebSession
from app.scheduler.registry import SchedulerRegistry
from app.wiring import services_of
from tests.factories import fake_registry, make_app_session, make_job
from tests.integration.api.conftest import issue_token
from tests.integration.web.conftest import sign_in
from tests.security.gated_cluster import Gate, GatedScheduler
from tests.world import World

# SQLite's single writer is where a held transaction hurts most; PostgreSQL's pool too.
pytestmark = pytest.mark.sqlite

# What the waiting request holds is judged by outcome, not by speed: a held SQLite write lock
# makes bob's sign-in (which writes his session) fail once the 5 s busy wait ends, and a held
# pooled connection shows in checkedout(). The deadline only keeps a loaded machine (Argon2
# beside the other test lanes) from failing a request that holds nothing.
DEADLINE = 30.0
UPLOAD = f"uploads/{uuid.uuid4().hex}?folder=/home/alice&offset=0"


@dataclass(frozen=True)
class Call:
    method: str
    url: str
    is_api: bool = False
    body: dict[str, object] | None = None
    form: dict[str, str] | None = None


SCRIPT_FORM = {"project_id": "{project}", "script": "#!/bin/bash\necho hi\n"}


CALLS = {
    "files folder": Call("GET", "/files/testcluster?path=/home/alice"),
    "files view": Call("GET", "/files/testcluster/view?path=/home/alice/a.txt"),
    "files download": Call("GET", "/files/testcluster/download?path=/home/alice/a.txt"),
    "files upload part": Call("PUT", f"/files/testcluster/{UPLOAD}"),
    "disk usage panel": Call("GET", "/dashboard/disk-usage"),
    "job log page": Call("GET", "/jobs/{job}/logs/stdout"),
    "job cancel": Call("POST", "/jobs/{job}/cancel"),
    "api files download": Call("GET", "/api/v1/files/testcluster/download?path=a.txt", True),
    "api files upload part": Call("PUT", f"/api/v1/files/testcluster/{UPLOAD}", True),
    "api disk usage": Call("GET", "/api/v1/clusters/testcluster/disk-usage", True),
    "api job log": Call("GET", "/api/v1/jobs/{job}/logs/stdout", True),
    "api job cancel": Call("POST", "/api/v1/jobs/{job}/cancel", True),
    "app session end": Call("POST", "/apps/sessions/{app_session}/end"),
    "api app session end": Call("DELETE", "/api/v1/sessions/{app_session}", True),
    "api script submit": Call("POST", "/api/v1/jobs", True, {"script": "#!/bin/bash\necho hi\n"}),
    "script submit": Call("POST", "/submit/script", form=SCRIPT_FORM),
    "script verdict": Call("POST", "/submit/script/preflight", form=SCRIPT_FORM),
    "resubmit form": Call("GET", "/jobs/{job}/resubmit"),
}


@pytest.fixture
def gate() -> Gate:
    return Gate()


@pytest.fixture
def registry(gate: Gate) -> SchedulerRegistry:
    return fake_registry(GatedScheduler(gate))


def other_client(app: FastAPI) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    return httpx.AsyncClient(transport=transport, base_url="http://testserver")


@dataclass(frozen=True)
class Alice:
    """alice's browser (her session last seen an hour ago), her API headers and her rows."""

    browser: httpx.AsyncClient
    headers: dict[str, str]
    rows: dict[str, int]


@pytest.fixture
async def alice(app: FastAPI, world: World, session: AsyncSession) -> AsyncIterator[Alice]:
    async with other_client(app) as browser:
        csrf = await sign_in(browser, "alice")
        job = await make_job(
            session,
            world.alice,
            world.physics,
            state="running",
            slurm_job_id="7",
            stdout_path="/home/alice/slurm-7.out",
        )
        app_session = await make_app_session(session, world.alice, world.physics)
        app_job = await session.get(Job, app_session.job_id)
        assert app_job is not None
        app_job.slurm_job_id = "8"
        headers = await issue_token(session, world.alice)
        long_ago = utc_now() - timedelta(hours=1)
        await session.execute(update(WebSession).values(last_seen_at=long_ago))
        await session.commit()
        rows = {"job": job.id, "app_session": app_session.id, "project": world.physics.id}
        yield Alice(browser, headers | {"X-CSRF-Token": csrf}, rows)


@pytest.mark.parametrize("call", list(CALLS.values()), ids=list(CALLS))
async def test_a_request_waiting_on_the_cluster_holds_no_database_resource(
    app: FastAPI,
    client: httpx.AsyncClient,
    alice: Alice,
    gate: Gate,
    call: Call,
) -> None:
    browser = alice.browser
    if call.is_api:
        browser.cookies.clear()
    gate.shut()
    url = call.url.format(**alice.rows)
    body = None if call.body is None else call.body | {"project_id": alice.rows["project"]}
    form = {key: value.format(**alice.rows) for key, value in (call.form or {}).items()}
    sent = browser.request(call.method, url, headers=alice.headers, json=body, data=form or None)
    waiting = asyncio.create_task(sent)
    try:
        await asyncio.wait_for(gate.entered.wait(), DEADLINE)
        assert services_of(app).engine.pool.checkedout() == 0  # type: ignore[attr-defined]
        async with other_client(app) as bob:
            await asyncio.wait_for(sign_in(bob, "bob"), DEADLINE)
        health = await asyncio.wait_for(client.get("/healthz"), DEADLINE)
        assert health.status_code == 200
    finally:
        gate.open()
        answered = await asyncio.wait_for(waiting, DEADLINE)
    assert answered.status_code < 500, answered.text
