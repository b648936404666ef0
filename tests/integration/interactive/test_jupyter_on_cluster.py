"""JupyterLab on each Slurm version's development cluster, through the portal: launched as
the user's job, reached on its session's own host (HTTP and the kernel's WebSocket), ended."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession
from websockets.asyncio.client import connect

from app.config import Settings
from app.main import create_app
from app.security import hash_password
from tests.dev_apps import wait_for_jupyterlab
from tests.factories import add_member, make_project, make_user
from tests.integration.interactive.app_host_client import AppHost, open_app_host
from tests.integration.interactive.test_proxy import serve
from tests.integration.web.conftest import sign_in
from tests.slurm_versions import cluster_config, clusters_file, versions

pytestmark = pytest.mark.slurm
STARTUP_SECONDS = 180


@pytest.fixture(params=versions())
def slurm_version(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@dataclass
class Portal:
    url: str
    browser: httpx.AsyncClient
    project_id: int
    version: str


@pytest.fixture
async def portal(slurm_version: str, db_url: str, session: AsyncSession) -> AsyncIterator[Portal]:
    wait_for_jupyterlab(slurm_version)
    cluster = cluster_config(slurm_version).name
    alice = await make_user(
        session, "alice", cluster_username="alice", cluster=cluster,
        password_hash=hash_password("secret-pass"),
    )  # fmt: skip
    physics = await make_project(session, "physics", slurm_account="physics", cluster=cluster)
    await add_member(session, alice, physics)
    await make_user(session, "carol", cluster_username="carol", cluster=cluster,
                    password_hash=hash_password("secret-pass"))  # fmt: skip
    await session.commit()
    settings = Settings(
        env="dev", database_url=db_url, clusters_file=clusters_file(slurm_version),
        run_poller_in_web=True, poll_interval=1,
    )  # fmt: skip
    app = create_app(settings)
    async with app.router.lifespan_context(app), serve(app) as port:
        url = f"http://127.0.0.1:{port}"
        async with httpx.AsyncClient(base_url=url, timeout=30) as browser:
            await sign_in(browser, "alice")
            yield Portal(url, browser, physics.id, slurm_version)


async def _launch_and_wait(portal: Portal) -> dict[str, Any]:
    csrf = await sign_in(portal.browser, "alice")
    form = {"csrf_token": csrf, "project_id": str(portal.project_id), "cores": "1",
            "memory_gb": "1", "time_minutes": "30"}  # fmt: skip
    launched = await portal.browser.post("/apps/jupyterlab", data=form)
    assert launched.status_code == 303, launched.text
    token = await _token(portal)
    headers = {"Authorization": f"Bearer {token}"}
    loop = asyncio.get_running_loop()
    deadline = loop.time() + STARTUP_SECONDS
    while loop.time() < deadline:
        (found,) = (await portal.browser.get("/api/v1/sessions", headers=headers)).json()
        if found["state"] == "running":
            return dict(found) | {"headers": headers}
        assert found["state"] != "ended", found
        await asyncio.sleep(1)
    raise AssertionError(f"JupyterLab did not start within {STARTUP_SECONDS} s: {found}")


async def _token(portal: Portal) -> str:
    page = await portal.browser.get("/settings/tokens")
    csrf = page.text.split('name="csrf_token" value="')[1].split('"')[0]
    data = {"csrf_token": csrf, "name": f"t{uuid.uuid4().hex[:6]}", "scopes": ["read", "submit"],
            "expires_in_days": "1"}  # fmt: skip
    created = await portal.browser.post("/settings/tokens", data=data)
    return created.text.split('id="new-token-secret" type="text" value="')[1].split('"')[0]


async def end_and_wait(portal: Portal, running: dict[str, Any], seconds: float) -> dict[str, Any]:
    """Ends the session through the API and returns its job once it has finished."""
    ended = await portal.browser.delete(
        f"/api/v1/sessions/{running['id']}", headers=running["headers"]
    )
    assert ended.status_code == 200, ended.text
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while loop.time() < deadline:
        job: dict[str, Any] = (await portal.browser.get(f"/api/v1/jobs/{running['job_id']}",
                                        headers=running["headers"])).json()  # fmt: skip
        if job["is_finished"]:
            break
        await asyncio.sleep(1)
    return job


def _execute(code: str) -> str:
    header = {"msg_id": uuid.uuid4().hex, "session": uuid.uuid4().hex, "username": "alice",
              "msg_type": "execute_request", "version": "5.3"}  # fmt: skip
    content = {"code": code, "silent": False, "store_history": False, "user_expressions": {},
               "allow_stdin": False, "stop_on_error": True}  # fmt: skip
    message = {"header": header, "parent_header": {}, "metadata": {}, "content": content,
               "channel": "shell", "buffers": []}  # fmt: skip
    return json.dumps(message)


async def _run_in_kernel(lab: AppHost, prefix: str, code: str) -> str:
    """Starts a kernel through the session's host and returns what ``code`` printed."""
    started = await lab.request(
        "POST", f"{prefix}api/kernels", json={"name": "python3"}, Origin=lab.origin
    )
    assert started.status_code == 201, started.text
    kernel = started.json()["id"]
    url = f"ws://{lab.host}{prefix}api/kernels/{kernel}/channels"
    async with connect(
        url,
        additional_headers={"Cookie": lab.cookie},
        origin=lab.origin,  # type: ignore[arg-type]
        host="127.0.0.1",
        port=lab.port,
    ) as socket:
        await socket.send(_execute(code))
        async with asyncio.timeout(60):
            while True:
                message = json.loads(await socket.recv())
                if message["msg_type"] == "stream":
                    return str(message["content"]["text"])
                if message["msg_type"] == "error":
                    raise AssertionError(message["content"])


async def test_jupyterlab_runs_as_the_users_job_and_its_kernel_answers_through_the_portal(
    portal: Portal,
) -> None:
    running = await _launch_and_wait(portal)
    prefix = running["connect_url"].removeprefix(portal.url)

    lab = await open_app_host(portal.url, portal.browser, f"{prefix}lab")
    page = await lab.get(f"{prefix}lab")
    printed = await _run_in_kernel(lab, prefix, "print(6*7)")
    whoami = await _run_in_kernel(lab, prefix, "import getpass; print(getpass.getuser())")

    assert lab.host.startswith("s-") and ".apps.localhost:" in lab.host
    assert page.status_code == 200 and "JupyterLab" in page.text
    assert printed == "42\n" and whoami == "alice\n"
    await sign_in(portal.browser, "carol")
    assert (await portal.browser.get(f"{prefix}lab")).status_code == 404
    carols_view = AppHost(portal.url, lab.host, portal.browser)
    assert (await carols_view.get(f"{prefix}lab")).status_code == 403
    await sign_in(portal.browser, "alice")
    job = await end_and_wait(portal, running, 60)
    assert job["state"] == "cancelled"
    assert (await portal.browser.get(f"{prefix}lab")).status_code == 404
