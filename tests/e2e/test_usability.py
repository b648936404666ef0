"""Usability in Chromium, in one signed-in session: times in the reader's time zone (page
and htmx fragments), focus on a refused form's error summary, copying a new API token by
keyboard, and no sideways scrolling on a 390 px phone."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect
from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session

from app.models.jobs import Job
from app.models.projects import Project
from app.models.users import User
from tests.e2e.conftest import LiveServer
from tests.e2e.shots import shot
from tests.e2e.test_jobs_flow import sign_in

# The dashboard's partition table comes from the real cluster's report.
pytestmark = [pytest.mark.browser, pytest.mark.slurm]

ZONE = "Asia/Kolkata"
SUBMITTED = datetime(2026, 1, 15, 10, 0, 0, tzinfo=UTC)
LOCAL = "2026-01-15 15:30:00 GMT+5:30"
UTC_TITLE = "2026-01-15 10:00:00 UTC"
DESKTOP = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}
REPORT_DEADLINE = 30.0


def _finished_job(database_url: str, login: str) -> int:
    """A job that ended long ago, written straight into the portal's database: the poller
    leaves finished jobs alone, and no cluster time is spent on it."""
    engine = create_engine(database_url)
    try:
        with Session(engine) as session:
            user = session.scalars(select(User).where(User.login == login)).one()
            project = session.scalars(select(Project).where(Project.name == "physics")).one()
            job = Job(
                uuid=str(uuid.uuid4()),
                owner_user_id=user.id,
                project_id=project.id,
                cluster=project.cluster,
                script="#!/bin/bash\ntrue\n",
                name=f"times-{uuid.uuid4().hex[:6]}",
                state="completed",
                submitted_at=SUBMITTED,
            )
            session.add(job)
            session.commit()
            return job.id
    finally:
        engine.dispose()


@pytest.fixture
def tab(browser: Any, live_server: LiveServer) -> Iterator[Any]:
    context = browser.new_context(
        base_url=live_server.base_url, timezone_id=ZONE, locale="en-US", viewport=DESKTOP
    )
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.base_url)
    page = context.new_page()
    yield page
    context.close()


def _times_are_local(page: Any, job_id: int) -> None:
    page.goto("/jobs")
    shown = page.locator(f"#job-row-{job_id} time")
    expect(shown).to_have_text(LOCAL)
    expect(shown).to_have_attribute("title", UTC_TITLE)
    # The same rows swapped in by htmx when a filter changes.
    page.locator("#job-results").evaluate("results => results.setAttribute('data-old', '')")
    page.select_option("#whose", "projects")
    expect(page.locator("#job-results[data-old]")).to_have_count(0)
    expect(page.locator(f"#job-row-{job_id} time")).to_have_text(LOCAL)


def _summary_is_focused(page: Any) -> None:
    expect(page.locator("#form-errors")).to_be_focused()
    assert page.evaluate("document.activeElement.id") == "form-errors"


def _refused_forms_focus_their_error_summary(page: Any) -> None:
    page.goto("/templates")
    page.get_by_role("link", name="Use Hello world").click()
    page.fill("#seconds", "9999")
    page.get_by_role("button", name="Submit job").click()
    _summary_is_focused(page)
    # The same form re-rendered by htmx rather than by a page load.
    page.focus("#message")
    page.locator("#submit-area").evaluate("area => area.setAttribute('data-old', '')")
    page.evaluate(
        "htmx.ajax('POST', document.querySelector('#submit-area form').action,"
        " {source: '#submit-area form', target: '#submit-area', swap: 'outerHTML'})"
    )
    expect(page.locator("#submit-area[data-old]")).to_have_count(0)
    _summary_is_focused(page)

    page.goto("/submit/script")
    page.fill("#script", "#!/bin/bash\n#SBATCH --tiem=5\nhostname\n")
    page.get_by_role("button", name="Submit job").click()
    expect(page.locator("#form-errors")).to_contain_text("--tiem")
    _summary_is_focused(page)


def _new_token_is_copied_by_keyboard(page: Any) -> None:
    page.goto("/settings/tokens")
    page.get_by_label("Name").fill(f"copy-{uuid.uuid4().hex[:6]}")
    page.get_by_role("button", name="Create token").click()
    secret = page.get_by_label("Token", exact=True).input_value()
    # The copy button's handler comes with the page's deferred scripts, which a loaded machine
    # may still be fetching when the new page's field is already there.
    page.wait_for_load_state()
    page.get_by_label("Token", exact=True).focus()
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Copy token")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#copy-token-status")).to_have_text("Copied.")
    assert page.evaluate("navigator.clipboard.readText()") == secret
    created = page.locator("#tokens-table tbody tr").first.locator("time").first
    expect(created).to_have_text(re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d GMT\+5:30$"))
    expect(created).to_have_attribute("title", re.compile(r" UTC$"))
    # Without the clipboard API the text is selected for the reader to copy.
    page.evaluate("Object.defineProperty(navigator, 'clipboard', {value: undefined})")
    page.get_by_role("button", name="Copy token").press("Enter")
    selected = "[document.activeElement.id, window.getSelection().toString()]"
    assert page.evaluate(selected) == ["new-token-secret", secret]


def _dashboard_with_partitions(page: Any) -> None:
    deadline = time.monotonic() + REPORT_DEADLINE
    page.goto("/dashboard")
    while page.locator("table.partitions").count() == 0 and time.monotonic() < deadline:
        page.wait_for_timeout(1000)
        page.goto("/dashboard")
    expect(page.locator("table.partitions").first).to_be_visible()


def _nothing_scrolls_sideways_on_a_phone(page: Any, job_id: int, screenshots: Path) -> None:
    page.set_viewport_size(PHONE)
    _dashboard_with_partitions(page)
    for name, path in [
        ("dashboard", "/dashboard"),
        ("jobs", "/jobs?whose=projects"),
        ("job", f"/jobs/{job_id}"),
        ("tokens", "/settings/tokens"),
        ("script", "/submit/script"),
        ("not-found", "/jobs/abc"),
    ]:
        if path != "/dashboard":
            page.goto(path)
        widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        shot(page, screenshots, f"phone-{name}")
        assert widths[0] <= widths[1], f"{path} scrolls sideways at 390 px: {widths}"


def test_local_times_error_focus_token_copy_and_phone_layout(
    tab: Any, live_server: LiveServer, screenshots: Path
) -> None:
    job_id = _finished_job(live_server.database_url, "carol")
    sign_in(tab, "carol")

    _times_are_local(tab, job_id)
    _refused_forms_focus_their_error_summary(tab)
    _new_token_is_copied_by_keyboard(tab)
    _nothing_scrolls_sideways_on_a_phone(tab, job_id, screenshots)
