"""Alice's day in a real browser against the live portal and the real Slurm cluster.

Every step waits on what the page shows, with a deadline; nothing is reloaded while a job
changes state, which is checked with a marker set on ``window`` before waiting.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.e2e.shots import shot

pytestmark = [pytest.mark.browser, pytest.mark.slurm, pytest.mark.slow]

JOB_DEADLINE = 120.0
STATUS_BADGE = "#job-status .status-line .state-badge"


def sign_in(page: Any, login: str = "alice") -> None:
    page.goto("/signin")
    page.fill("#login", login)
    page.fill("#password", f"{login}-demo")
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r".*/templates.*|.*/$|.*/dashboard.*"))


def open_submit_form(page: Any, template: str = "Hello world") -> None:
    page.goto("/templates")
    page.get_by_role("link", name=f"Use {template}").click()
    page.wait_for_url(re.compile(r".*/templates/\d+/submit$"))


def submit_hello(page: Any, seconds: int, message: str) -> int:
    open_submit_form(page)
    page.fill("#message", message)
    page.fill("#seconds", str(seconds))
    page.get_by_role("button", name="Submit job").click()
    page.wait_for_url(re.compile(r".*/jobs/\d+$"), timeout=60_000)
    return int(page.url.rsplit("/", 1)[1])


def mark_no_reload(page: Any) -> None:
    page.evaluate("window.__noReload = true")


def assert_not_reloaded(page: Any) -> None:
    assert page.evaluate("window.__noReload === true"), "the page was reloaded"


def watch_labels(locator: Any, until: str, deadline: float = JOB_DEADLINE) -> list[str]:
    """The distinct texts ``locator`` showed, in order, until it shows ``until``."""
    seen: list[str] = []
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        label = locator.inner_text().strip()
        if not seen or seen[-1] != label:
            seen.append(label)
        if label == until:
            return seen
        time.sleep(0.1)
    raise AssertionError(f"never reached {until!r}; saw {seen}")


def test_alice_submits_watches_reads_live_output_and_cancels(page: Any, screenshots: Path) -> None:
    sign_in(page)
    job_id = submit_hello(page, 20, "e2e live output")
    shot(page, screenshots, "job-detail-just-submitted")

    history = page.context.new_page()
    history.goto("/jobs")
    mark_no_reload(history)
    row_badge = history.locator(f"#job-row-{job_id} .state-badge")
    mark_no_reload(page)
    log = page.locator("#log-stdout")

    expect(log).to_contain_text("Hello from", timeout=JOB_DEADLINE * 1000)
    assert "Done." not in log.inner_text()
    shot(page, screenshots, "job-detail-running-live-log")
    shot(history, screenshots, "job-history-running")
    labels = watch_labels(row_badge, "Completed")
    expect(log).to_contain_text("Done.", timeout=30_000)
    page.locator(STATUS_BADGE, has_text="Completed").wait_for(timeout=30_000)

    assert labels[0] in ("Submitting", "Pending", "Running")
    assert labels[-2:] == ["Running", "Completed"] or labels[-3:-1] == ["Running", "Finishing"]
    assert "e2e live output" in log.inner_text()
    assert_not_reloaded(history)
    assert_not_reloaded(page)
    assert history.locator("#job-results").get_attribute("data-polling") == "off"
    shot(history, screenshots, "job-history-completed")
    shot(page, screenshots, "job-detail-completed")

    long_job = submit_hello(page, 300, "to be cancelled")
    page.locator(STATUS_BADGE, has_text="Running").wait_for(timeout=60_000)
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("link", name="Cancel job").click()
    page.locator("#job-status .notice").wait_for(timeout=30_000)
    page.locator(STATUS_BADGE, has_text="Cancelled").wait_for(timeout=60_000)
    assert page.url.endswith(f"/jobs/{long_job}")
    shot(page, screenshots, "job-detail-cancelled")


def test_alice_sees_an_inline_error_for_a_bad_value(page: Any, screenshots: Path) -> None:
    sign_in(page)
    open_submit_form(page)
    page.fill("#seconds", "9999")
    page.get_by_role("button", name="Submit job").click()

    error = page.locator("#seconds-error")
    error.wait_for(timeout=15_000)
    assert error.inner_text().strip()
    assert re.search(r"/templates/\d+/submit$", page.url)
    shot(page, screenshots, "submit-form-inline-error")


def test_pages_render_for_screenshots_at_desktop_and_phone_width(
    page: Any, screenshots: Path
) -> None:
    sign_in(page)
    job_id = submit_hello(page, 1, "for the screenshots")
    page.goto("/dashboard")
    page.get_by_role("heading", name="Dashboard").wait_for()
    shot(page, screenshots, "dashboard")
    page.goto("/jobs")
    page.get_by_role("heading", name="Jobs", exact=True).wait_for()
    page.set_viewport_size({"width": 390, "height": 844})
    shot(page, screenshots, "job-history-phone")
    page.locator(f"#job-row-{job_id} th a").click()
    page.locator("#job-status").wait_for()
    shot(page, screenshots, "job-detail-phone")
    page.goto(f"/jobs/{job_id}/resubmit")
    page.get_by_role("button", name="Submit the new job").wait_for()
    shot(page, screenshots, "job-resubmit-phone")
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"/jobs/{job_id}")
    expect(page.locator("#log-stdout")).to_contain_text("Done.", timeout=JOB_DEADLINE * 1000)
    page.goto(f"/jobs/{job_id}/logs/stdout")
    page.get_by_role("link", name="Download the whole file").wait_for()
    shot(page, screenshots, "job-log-page")
    page.goto(f"/jobs/{job_id}")
    page.keyboard.press("Tab")
    focused = page.evaluate("document.activeElement.className")
    assert focused == "skip-link"
