"""JupyterLab on a site cluster's compute node, through the portal, in both ways the clusters
file offers to reach compute nodes: ``direct`` (the portal connects to the node) and
``via_login`` (SSH channels on the user's own connection to the login node), the latter with
the compute network unreachable from the portal's host."""

from __future__ import annotations

import socket
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

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
)
from tests.integration.interactive.test_proxy import serve
from tests.integration.web.conftest import sign_in
from tests.slurm_versions import DEV_CLUSTER, cluster_config, clusters_file, release

pytestmark = pytest.mark.slurm
COMPUTE_NODES = ("sitenode1", "sitenode2")
SLURMD_PORT = 6818


def _reachable(node: str) -> bool:
    """Whether this host can open a TCP connection to the node (its slurmd listens)."""
    try:
        socket.create_connection((node, SLURMD_PORT), timeout=3).close()
    except OSError:
        return False
    return True


@pytest.fixture(params=["direct", "via_login"])
def access(request: pytest.FixtureRequest, slurm_version: str) -> Iterator[str]:
    """The way to the compute nodes; with via_login the host's route to them is cut."""
    mode = str(request.param)
    isolate = [str(DEV_CLUSTER), "isolate", "--version", slurm_version]
    if mode == "via_login":
        subprocess.run([*isolate, "on"], check=True)
    try:
        yield mode
    finally:
        subprocess.run([*isolate, "off"], check=True)


@pytest.fixture
async def portal(
    slurm_version: str, access: str, db_url: str, session: AsyncSession, tmp_path: Path
) -> AsyncIterator[Portal]:
    # The nodes run the host's programs, JupyterLab included.
    wait_for_jupyterlab(release(slurm_version))
    cluster = cluster_config(slurm_version).name
    text = clusters_file(slurm_version).read_text()
    chosen = tmp_path / "clusters.toml"
    chosen.write_text(text.replace('compute_access = "via_login"', f'compute_access = "{access}"'))
    alice = await make_user(
        session, "alice", cluster_username="alice", cluster=cluster,
        password_hash=hash_password("secret-pass"),
    )  # fmt: skip
    physics = await make_project(session, "physics", slurm_account="physics", cluster=cluster)
    await add_member(session, alice, physics)
    await session.commit()
    settings = Settings(
        env="dev", database_url=db_url, clusters_file=chosen, run_poller_in_web=True,
        poll_interval=1,
    )  # fmt: skip
    app = create_app(settings)
    async with app.router.lifespan_context(app), serve(app) as port:
        url = f"http://127.0.0.1:{port}"
        async with httpx.AsyncClient(base_url=url, timeout=30) as browser:
            await sign_in(browser, "alice")
            yield Portal(url, browser, physics.id, slurm_version)


async def test_jupyterlab_on_a_compute_node_answers_both_ways(portal: Portal, access: str) -> None:
    running = await _launch_and_wait(portal)
    prefix = running["connect_url"].removeprefix(portal.url)

    lab = await open_app_host(portal.url, portal.browser, f"{prefix}lab")
    page = await lab.get(f"{prefix}lab")
    where = await _run_in_kernel(lab, prefix, "import socket; print(socket.gethostname())")

    assert page.status_code == 200 and "JupyterLab" in page.text
    assert where.strip() in COMPUTE_NODES
    # via_login: the portal's host has no way to the compute nodes, only the login node has.
    assert all(_reachable(node) == (access == "direct") for node in COMPUTE_NODES)
    ended = await portal.browser.delete(
        f"/api/v1/sessions/{running['id']}", headers=running["headers"]
    )
    assert ended.status_code == 200, ended.text
