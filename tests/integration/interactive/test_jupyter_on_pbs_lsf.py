"""JupyterLab on the PBS and LSF clusters, through the portal: the same app definition as on
Slurm, started by ``qsub`` or ``bsub`` as the user's job, reached on its session's own host
(HTTP and the kernel's WebSocket), ended by End.

Both clusters run their jobs on the host's file system, where ``scripts/dev-cluster apps``
installs JupyterLab for Slurm 22.05, so that install serves them too.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from app.config import Settings
from app.main import create_app
from app.security import hash_password
from tests.dev_apps import wait_for_jupyterlab
from tests.factories import add_member, make_project, make_user
from tests.integration.interactive.app_host_client import open_app_host
from tests.integration.interactive.test_jupyter_on_cluster import (
    Portal,
    _launch_and_wait,
    _run_in_kernel,
    end_and_wait,
)
from tests.integration.interactive.test_proxy import serve
from tests.integration.web.conftest import sign_in
from tests.other_schedulers import clusters_file, scheduler_cluster
from tests.slurm_versions import HOST_VERSION


@pytest.fixture(
    params=[pytest.param("pbs", marks=pytest.mark.pbs), pytest.param("lsf", marks=pytest.mark.lsf)]
)
async def portal(
    request: pytest.FixtureRequest, db_url: str, session: AsyncSession
) -> AsyncIterator[Portal]:
    scheduler = str(request.param)
    cluster = scheduler_cluster(scheduler).name
    wait_for_jupyterlab(HOST_VERSION)
    alice = await make_user(
        session, "alice", cluster_username="alice", cluster=cluster,
        password_hash=hash_password("secret-pass"),
    )  # fmt: skip
    physics = await make_project(session, "physics", slurm_account="physics", cluster=cluster)
    await add_member(session, alice, physics)
    await session.commit()
    settings = Settings(
        env="dev", database_url=db_url, clusters_file=clusters_file(scheduler),
        run_poller_in_web=True, poll_interval=1,
    )  # fmt: skip
    app = create_app(settings)
    async with app.router.lifespan_context(app), serve(app) as port:
        url = f"http://127.0.0.1:{port}"
        async with httpx.AsyncClient(base_url=url, timeout=30) as browser:
            await sign_in(browser, "alice")
            yield Portal(url, browser, physics.id, scheduler)


async def test_jupyterlab_runs_as_the_users_job_on_pbs_and_lsf(portal: Portal) -> None:
    running = await _launch_and_wait(portal)
    prefix = running["connect_url"].removeprefix(portal.url)

    lab = await open_app_host(portal.url, portal.browser, f"{prefix}lab")
    page = await lab.get(f"{prefix}lab")
    whoami = await _run_in_kernel(lab, prefix, "import getpass; print(getpass.getuser())")

    assert page.status_code == 200 and "JupyterLab" in page.text
    assert whoami == "alice\n"
    job = await end_and_wait(portal, running, 90)
    assert job["state"] == "cancelled", job
    assert (await portal.browser.get(f"{prefix}lab")).status_code == 404
