"""The shell in Chromium on the real development clusters: alice opens it from the navigation,
runs ``hostname; id`` on the login node as herself (on the site cluster, ``sitelogin``),
pastes and copies through the keyboard, and the shell ends when her tab closes (recorded in
the audit trail) or when she stops typing; a site that turned shells off has neither the
link nor the page, and refuses the socket."""

from __future__ import annotations

import pwd
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import LiveServer
from tests.e2e.test_jobs_flow import shot, sign_in
from tests.portal import PortalProcess, libpq_conninfo, seeded_database, wait_for
from tests.slurm_versions import HOST_VERSION, clusters_file, run_on, site_versions

# Shells on login nodes: no job runs on a cluster.
pytestmark = [pytest.mark.browser, pytest.mark.slurm, pytest.mark.slow, pytest.mark.no_jobs]

SCREEN = ".xterm-rows"
CONNECTED = "Connected to {cluster}."
# A socket opened from a portal page, and how it ended: "open", or "closed <code>".
SOCKET_FATE = """async (path) => {
  const socket = new WebSocket("ws://" + location.host + path);
  return await new Promise((resolve) => {
    socket.onopen = () => { socket.close(); resolve("open"); };
    socket.onclose = (event) => resolve("closed " + event.code);
  });
}"""


@pytest.fixture
def own_portal(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LiveServer]:
    """A portal of its own with the settings ``request.param`` gives (environment)."""
    env: dict[str, str] = request.param
    database_url = seeded_database("e2e_shell", env)
    server = PortalProcess(database_url, tmp_path / "server.log", env=env)
    server.start()
    try:
        yield LiveServer(server.base_url, database_url)
    finally:
        server.stop()


def open_shell(page: Any, cluster: str = "testcluster") -> Any:
    """Sign in as alice and open the shell from the navigation; its screen, once connected.
    Nothing the page does may be refused by its Content-Security-Policy (xterm.js's own
    style elements included)."""
    refused: list[str] = []
    page.on("console", lambda m: refused.append(m.text) if "Security Policy" in m.text else None)
    sign_in(page)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Shell").click()
    connected = CONNECTED.format(cluster=cluster)
    expect(page.locator("#shell-status")).to_have_text(connected, timeout=30_000)
    expect(page.get_by_role("link", name="Open a new shell")).to_be_hidden()
    # The theme's colour comes from xterm.js's own style element, applied under the nonce.
    colour = page.locator(SCREEN).evaluate("rows => getComputedStyle(rows).color")
    assert colour == "rgb(233, 237, 241)"
    assert refused == []
    return page.locator(SCREEN)


def shell_events(database_url: str) -> list[tuple[str, dict[str, Any]]]:
    with psycopg.connect(libpq_conninfo(database_url)) as conn:
        rows = conn.execute(
            "SELECT action, details FROM audit_events WHERE action LIKE 'shell.%' ORDER BY id"
        ).fetchall()
    return [(row[0], row[1]) for row in rows]


def test_alice_runs_hostname_and_id_on_the_login_node_and_closing_the_tab_ends_it(
    browser: Any, live_server: LiveServer, screenshots: Path
) -> None:
    before = len(shell_events(live_server.database_url))
    context = browser.new_context(
        base_url=live_server.base_url, permissions=["clipboard-read", "clipboard-write"]
    )
    page = context.new_page()
    screen = open_shell(page)
    login_node = run_on(HOST_VERSION, ["hostname"], check=True).stdout.strip()
    alice = pwd.getpwnam("alice")
    page.keyboard.type("hostname; id\n")
    expect(screen).to_contain_text(f"uid={alice.pw_uid}(alice)", timeout=20_000)
    text = screen.inner_text()
    assert f"\n{login_node}\n" in text.replace("\xa0", " "), text
    shot(page, screenshots, "shell-01-hostname-and-id")

    # Paste with the keyboard: what the clipboard holds reaches the shell.
    page.evaluate("navigator.clipboard.writeText('echo pasted-$((6*7))')")
    page.keyboard.press("Control+Shift+V")
    page.keyboard.press("Enter")
    expect(screen).to_contain_text("pasted-42")
    # Copy with the keyboard: a selection made with the mouse reaches the clipboard. The row
    # chosen is one the shell wrote for certain (the screen's first row may be blank).
    row = page.locator(f"{SCREEN} > div", has_text=f"uid={alice.pw_uid}(alice)").first
    box = row.bounding_box()
    page.mouse.move(box["x"] + 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] - 2, box["y"] + box["height"] / 2, steps=5)
    page.mouse.up()
    page.keyboard.press("Control+Shift+C")
    expect(page.locator("#shell-status")).to_have_text("Copied.")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert f"uid={alice.pw_uid}(alice)" in copied
    assert copied.strip() in row.inner_text().replace("\xa0", " ")

    page.close()
    wait_for(
        lambda: len(shell_events(live_server.database_url)) >= before + 2,
        20,
        "the shell's end in the audit trail",
    )
    opened, closed = shell_events(live_server.database_url)[before : before + 2]
    assert opened == ("shell.open", {"username": "alice"})
    assert closed[0] == "shell.close" and closed[1]["ended_by"] == "browser"
    context.close()


@pytest.mark.parametrize(
    "own_portal",
    [{"PORTAL_CLUSTERS_FILE": str(clusters_file(version))} for version in site_versions()],
    indirect=True,
)
def test_on_the_site_cluster_the_shell_is_on_its_login_node_not_the_portals_host(
    browser: Any, own_portal: LiveServer, screenshots: Path
) -> None:
    page = browser.new_context(base_url=own_portal.base_url).new_page()
    screen = open_shell(page, "sitecluster")
    page.keyboard.type("hostname; id\n")
    expect(screen).to_contain_text(f"uid={pwd.getpwnam('alice').pw_uid}(alice)", timeout=20_000)
    lines = screen.inner_text().replace("\xa0", " ").splitlines()
    assert "sitelogin" in lines
    assert run_on(HOST_VERSION, ["hostname"], check=True).stdout.strip() not in lines
    shot(page, screenshots, "shell-03-site-login-node")


@pytest.mark.parametrize("own_portal", [{"PORTAL_SHELL_IDLE_TIMEOUT": "3"}], indirect=True)
def test_a_shell_left_without_input_ends_with_a_plain_message(
    browser: Any, own_portal: LiveServer, screenshots: Path
) -> None:
    page = browser.new_context(base_url=own_portal.base_url).new_page()
    screen = open_shell(page)
    started = time.monotonic()
    expect(page.get_by_text("It closes after 3 seconds without input")).to_be_visible()
    message = "The shell was closed after 3 seconds without input."
    expect(screen).to_contain_text(message, timeout=20_000)
    assert time.monotonic() - started >= 2.5
    expect(page.locator("#shell-status")).to_have_text(message)
    expect(page.get_by_role("link", name="Open a new shell")).to_be_visible()
    expect(page.get_by_role("button", name="Paste")).to_be_disabled()
    shot(page, screenshots, "shell-02-idle")


@pytest.mark.parametrize("own_portal", [{"PORTAL_SHELL_ENABLED": "false"}], indirect=True)
def test_a_site_that_turned_shells_off_shows_no_link_and_refuses_the_shell(
    browser: Any, own_portal: LiveServer
) -> None:
    page = browser.new_context(base_url=own_portal.base_url).new_page()
    sign_in(page)
    page.goto("/dashboard")
    navigation = page.get_by_role("navigation", name="Main")
    expect(navigation.get_by_role("link", name="Files")).to_be_visible()
    expect(navigation.get_by_role("link", name="Shell")).to_have_count(0)
    answer = page.goto("/shell/testcluster")
    assert answer is not None and answer.status == 404
    page.goto("/dashboard")
    assert page.evaluate(SOCKET_FATE, "/shell/testcluster/socket") == "closed 1006"
