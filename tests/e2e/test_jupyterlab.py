"""JupyterLab in a real browser: launched from the Interactive apps page on the real cluster,
opened with Connect on the session's own host, a notebook cell run; nobody else gets in;
ending the session ends its Slurm job."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import expect

from tests.dev_apps import wait_for_jupyterlab
from tests.e2e.conftest import LiveServer
from tests.e2e.notebook import run_cell
from tests.e2e.shots import shot
from tests.e2e.test_jobs_flow import sign_in
from tests.slurm_versions import HOST_VERSION

pytestmark = [pytest.mark.browser, pytest.mark.slurm, pytest.mark.slow]

START_DEADLINE_MS = 180_000
NOTEBOOK_DEADLINE_MS = 90_000


def _launch(page: Any, screenshots: Path) -> None:
    page.goto("/dashboard")
    page.get_by_role("link", name="Interactive apps").click()
    page.get_by_role("link", name="JupyterLab").click()
    page.fill("#cores", "1")
    page.fill("#memory_gb", "1")
    page.fill("#time_minutes", "30")
    shot(page, screenshots, "apps-launch-form")
    page.get_by_role("button", name="Launch").click()
    page.wait_for_url(re.compile(r".*/apps$"))
    expect(page.locator("#sessions-table .session-state").first).to_have_text(
        re.compile("Waiting for a node|Starting the server|Running")
    )


def _slurm_job_state(job_id: str) -> str:
    found = subprocess.run(
        ["squeue", "-h", "-j", job_id, "-o", "%T"], capture_output=True, text=True, check=False
    )
    return found.stdout.strip()


def test_alice_runs_a_notebook_cell_in_jupyterlab_through_the_portal(
    browser: Any, live_server: LiveServer, screenshots: Path
) -> None:
    wait_for_jupyterlab(HOST_VERSION)
    alice = browser.new_context(
        base_url=live_server.base_url, viewport={"width": 1366, "height": 900}
    )
    page = alice.new_page()
    sign_in(page)
    _launch(page, screenshots)
    connect = page.get_by_role("link", name="Connect")
    expect(connect).to_be_visible(timeout=START_DEADLINE_MS)
    shot(page, screenshots, "apps-session-running")
    session_url = connect.get_attribute("href")
    slurm_job = page.locator("#sessions-table td a").first.inner_text().strip()
    with alice.expect_page() as opened:
        connect.click()
    lab = opened.value
    try:
        assert run_cell(lab, "print(6*7)", NOTEBOOK_DEADLINE_MS) == "42"
    finally:
        shot(lab, screenshots, "jupyterlab-notebook", full_page=False)
    # The app has an origin of its own, never the portal's.
    lab_url = urlsplit(lab.url)
    assert re.fullmatch(r"s-[0-9a-f]{32}\.apps\.localhost", lab_url.hostname or "")
    assert lab_url.path.startswith(session_url.removesuffix("lab"))

    carol = browser.new_context(base_url=live_server.base_url)
    other = carol.new_page()
    sign_in(other, "carol")
    assert other.goto(session_url).status == 404
    assert other.goto(lab.url).status == 403
    assert httpx.get(f"{live_server.base_url}{session_url}").status_code == 303
    carol.close()

    page.bring_to_front()
    asked: list[str] = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.accept()))
    page.get_by_role("button", name="End the JupyterLab session").click()
    state = page.locator("#sessions-table .session-state").first
    # From the click on, never "Running" again; then ended by its owner, not "Cancelled".
    expect(state).to_have_text(re.compile("Ending…|Ended by you"), timeout=15_000)
    shot(page, screenshots, "apps-session-ending")
    expect(state).to_have_text("Ended by you", timeout=60_000)
    assert "anything not saved is lost" in asked[0]
    expect(page.get_by_role("link", name="Relaunch")).to_be_visible()
    # The app's own tab, reloaded, is the portal's page with Relaunch, not the app's errors.
    lab.reload()
    expect(lab.get_by_role("heading", level=1)).to_have_text("Your JupyterLab session has ended")
    expect(lab.get_by_role("link", name="Relaunch with the same values")).to_have_attribute(
        "href", re.compile(rf"^{re.escape(live_server.base_url)}/apps/jupyterlab\?relaunch=\d+$")
    )
    shot(lab, screenshots, "jupyterlab-tab-after-end", full_page=False)
    lab.close()
    deadline = time.monotonic() + 30
    while _slurm_job_state(slurm_job) and time.monotonic() < deadline:
        time.sleep(1)
    assert _slurm_job_state(slurm_job) == ""
    shot(page, screenshots, "apps-session-ended")
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto("/apps/jupyterlab")
    assert page.evaluate("document.scrollingElement.scrollWidth") <= 390
    shot(page, screenshots, "apps-launch-phone")
    alice.close()
