"""Browser notifications in Chromium: turned on by a click, then shown for a job's end."""

from __future__ import annotations

import re
import uuid
from typing import Any

import psycopg
import pytest

from tests.e2e.conftest import LiveServer
from tests.portal import libpq_conninfo

pytestmark = pytest.mark.browser
# Records what the page shows instead of asking the desktop, which a headless browser lacks.
FAKE_NOTIFICATION = """
window.__shown = [];
window.Notification = class {
  constructor(title, options) { window.__shown.push(title); }
  static get permission() { return window.__granted ? "granted" : "default"; }
  static requestPermission() { window.__granted = true; return Promise.resolve("granted"); }
};
"""


def _alice_job_ends(database_url: str, name: str) -> None:
    """A job of alice's that the poller has just seen end, written as the poller writes it."""
    with psycopg.connect(libpq_conninfo(database_url)) as conn:
        owner, project, cluster = conn.execute(
            "SELECT u.id, p.id, p.cluster FROM users u, projects p "
            "WHERE u.login = 'alice' AND p.name = 'physics'"
        ).fetchone()  # type: ignore[misc]
        job_id = conn.execute(
            "INSERT INTO jobs (uuid, owner_user_id, project_id, cluster, parameters, script, "
            "name, state, submitted_outside, created_at, updated_at) VALUES "
            "(%s, %s, %s, %s, '{}', 'true', %s, 'completed', false, now(), now()) RETURNING id",
            (str(uuid.uuid4()), owner, project, cluster, name),
        ).fetchone()[0]  # type: ignore[index]
        conn.execute(
            "INSERT INTO job_events (job_id, at, from_state, to_state, source) "
            "VALUES (%s, now(), 'running', 'completed', 'poller')",
            (job_id,),
        )


def test_turned_on_browser_notifications_show_a_job_end(page: Any, live_server: LiveServer) -> None:
    page.context.add_init_script(FAKE_NOTIFICATION)
    page.goto("/signin")
    page.fill("#login", "alice")
    page.fill("#password", "alice-demo")
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r".*/templates.*|.*/$|.*/dashboard.*"))
    page.get_by_role("link", name="Notifications").click()
    page.get_by_role("button", name="Turn on browser notifications").click()
    page.get_by_text("Browser notifications are on.").wait_for()
    # Functions, not expressions: Playwright evaluates an expression again on every poll, and
    # the portal's Content-Security-Policy refuses eval outside Playwright's first call.
    page.wait_for_function("() => localStorage.getItem('portal-notify-cursor') !== null")
    name = f"e2e-notify-{uuid.uuid4().hex[:8]}"
    _alice_job_ends(live_server.database_url, name)
    # The permission and the switch outlive the page, as a browser's would.
    page.context.add_init_script("window.__granted = true")
    page.reload()
    page.wait_for_function(f"() => window.__shown.includes('Job {name} is completed')")
