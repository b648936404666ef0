"""JupyterLab in Chromium on the site cluster's second compute node, reached through the login
node (``compute_access = "via_login"``) while the portal's host has no route to the compute
nodes: Connect, a notebook cell that says where it runs, End."""

from __future__ import annotations

import re
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.dev_apps import wait_for_jupyterlab
from tests.e2e.conftest import LiveServer
from tests.e2e.notebook import run_cell
from tests.e2e.shots import shot
from tests.e2e.test_jobs_flow import sign_in
from tests.portal import PortalProcess, seeded_database
from tests.slurm_versions import (
    DEV_CLUSTER,
    cluster_config,
    clusters_file,
    release,
    run_on,
    site_versions,
)

pytestmark = [pytest.mark.browser, pytest.mark.slurm, pytest.mark.slow]

START_DEADLINE_MS = 180_000
NOTEBOOK_DEADLINE_MS = 90_000


@pytest.fixture(scope="module", params=site_versions())
def slurm_version(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def site_server(slurm_version: str, tmp_path: Path) -> Iterator[LiveServer]:
    """The portal on the site cluster alone, its clusters file saying ``via_login``."""
    assert cluster_config(slurm_version).compute_access == "via_login"
    env = {"PORTAL_CLUSTERS_FILE": str(clusters_file(slurm_version))}
    database_url = seeded_database("e2e_site", env)
    server = PortalProcess(database_url, tmp_path / "server.log", env=env)
    server.start()
    try:
        yield LiveServer(server.base_url, database_url)
    finally:
        server.stop()


@pytest.fixture
def compute_network_cut(slurm_version: str) -> Iterator[None]:
    isolate = [str(DEV_CLUSTER), "isolate", "--version", slurm_version]
    subprocess.run([*isolate, "on"], check=True)
    try:
        yield
    finally:
        subprocess.run([*isolate, "off"], check=True)


@pytest.fixture
def first_node_busy(slurm_version: str) -> Iterator[None]:
    """A job of alice's holding the first compute node whole, so the session gets the second."""
    sbatch = ["runuser", "-u", "alice", "--", "sbatch", "--parsable", "--exclusive",
              "-w", "sitenode1", "-t", "15", "-o", "/dev/null", "--wrap", "sleep 900"]  # fmt: skip
    job_id = run_on(slurm_version, sbatch, check=True).stdout.strip()
    try:
        yield
    finally:
        run_on(slurm_version, ["scancel", job_id], check=False)
        # And the session's job, should the test stop before ending it: the site cluster's
        # next tests need both nodes (its tests run one after another).
        run_on(slurm_version, ["scancel", "--user=alice"], check=False)


def _unreachable(node: str, port: int = 6818) -> bool:
    try:
        socket.create_connection((node, port), timeout=3).close()
    except OSError:
        return True
    return False


@pytest.mark.usefixtures("compute_network_cut", "first_node_busy")
def test_jupyterlab_on_the_second_compute_node_through_the_login_node(
    browser: Any, site_server: LiveServer, slurm_version: str, screenshots: Path
) -> None:
    wait_for_jupyterlab(release(slurm_version))
    alice = browser.new_context(
        base_url=site_server.base_url, viewport={"width": 1366, "height": 900}
    )
    page = alice.new_page()
    sign_in(page)
    page.goto("/apps/jupyterlab")
    page.fill("#cores", "1")
    page.fill("#memory_gb", "1")
    page.fill("#time_minutes", "30")
    page.get_by_role("button", name="Launch").click()
    page.wait_for_url(re.compile(r".*/apps$"))
    connect = page.get_by_role("link", name="Connect")
    expect(connect).to_be_visible(timeout=START_DEADLINE_MS)
    shot(page, screenshots, "apps-site-session-running")
    with alice.expect_page() as opened:
        connect.click()
    lab = opened.value
    try:
        where = run_cell(lab, "import socket; print(socket.gethostname())", NOTEBOOK_DEADLINE_MS)
    finally:
        shot(lab, screenshots, "jupyterlab-site-second-node", full_page=False)

    assert where == "sitenode2"
    assert _unreachable("sitenode1") and _unreachable("sitenode2")
    lab.close()
    page.bring_to_front()
    # Ending asks first (unsaved notebooks are lost).
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="End the JupyterLab session").click()
    expect(page.locator("#sessions-table .session-state").first).to_have_text(
        "Ended by you", timeout=60_000
    )
    alice.close()
