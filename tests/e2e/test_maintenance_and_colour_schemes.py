"""A maintenance reservation made with scontrol on the real cluster is announced, and the
submit form warns of it before a too-long job is sent; every main page in the dark scheme
(axe-core checks each page state, as in every browser test)."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import LiveServer
from tests.e2e.test_jobs_flow import STATUS_BADGE, open_submit_form, shot, sign_in, submit_hello
from tests.slurm_versions import HOST_VERSION, run_on

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
WARNING = "#maintenance-warning"


@pytest.fixture
def maintenance() -> Iterator[str]:
    """A MAINT reservation on every node of the host's cluster, 30 hours from now."""
    name = f"portal_maint_{uuid.uuid4().hex[:8]}"
    argv = [
        "scontrol", "create", "reservation", f"reservationname={name}",
        "starttime=now+30hours", "duration=06:00:00", "nodes=ALL", "users=root",
        "flags=maint,ignore_jobs",
    ]  # fmt: skip
    made = run_on(HOST_VERSION, argv)
    assert made.returncode == 0, made.stderr
    try:
        yield name
    finally:
        run_on(HOST_VERSION, ["scontrol", "delete", f"reservation={name}"])


def _announced(page: Any, text: str, present: bool, deadline: float = 60.0) -> None:
    """Reload the dashboard until the poller's next reservations read shows (or drops) it."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        page.goto("/dashboard")
        if (page.locator("#announcements", has_text=text).count() > 0) == present:
            return
        page.wait_for_timeout(500)
    raise AssertionError(f"announcement {text!r} {'never shown' if present else 'still shown'}")


def _ask_for_two_days(page: Any, form_url: str | None = None) -> str:
    if form_url is None:
        open_submit_form(page)
    else:
        page.goto(form_url)
    page.select_option("#partition", "long")
    page.fill("#time_limit", "2-00:00:00")
    page.locator("#time_limit").press("Tab")
    return str(page.url)


@pytest.mark.browser
@pytest.mark.slurm
def test_a_maintenance_reservation_is_announced_and_the_form_warns_of_it(
    browser: Any, live_server: LiveServer, screenshots: Path, maintenance: str
) -> None:
    context = browser.new_context(
        base_url=live_server.base_url, viewport=DESKTOP, color_scheme="light"
    )
    page = context.new_page()
    sign_in(page)
    _announced(page, "testcluster stops for maintenance from", present=True)
    shot(page, screenshots, "maintenance-dashboard-light")
    form_url = _ask_for_two_days(page)
    warning = page.locator(WARNING)
    expect(warning).to_have_text(
        re.compile(
            r"This job asks for 2 days; testcluster stops for maintenance in (29|30) hours, "
            r"so it will wait until after it — ask for less than (29|30) hours to run now\."
        )
    )
    shot(page, screenshots, "maintenance-form-warning-light")
    page.emulate_media(color_scheme="dark")
    shot(page, screenshots, "maintenance-form-warning-dark")
    page.fill("#time_limit", "1:00:00")
    page.locator("#time_limit").press("Tab")
    expect(warning).to_have_count(0)
    context.close()

    french = browser.new_context(
        base_url=live_server.base_url, viewport=PHONE, locale="fr-FR", color_scheme="dark"
    )
    phone = french.new_page()
    sign_in(phone)
    phone.goto("/jobs")
    expect(phone.locator(".announcement-banner")).to_contain_text(
        "testcluster s'arrête pour maintenance du"
    )
    shot(phone, screenshots, "maintenance-banner-phone-fr-dark")
    _ask_for_two_days(phone, form_url)
    expect(phone.locator(WARNING)).to_contain_text(
        "Ce travail demande 2 jours\u202f; testcluster s'arrête pour maintenance dans"
    )
    shot(phone, screenshots, "maintenance-form-warning-phone-fr-dark")
    banner = phone.locator(".announcement-banner")
    banner.get_by_role("button", name=re.compile("^Masquer")).click()
    expect(banner).to_be_hidden()
    phone.goto("/jobs")
    expect(phone.locator(".announcement-banner")).to_have_count(0)
    french.close()

    run_on(HOST_VERSION, ["scontrol", "delete", f"reservation={maintenance}"])
    after = browser.new_context(base_url=live_server.base_url)
    tab = after.new_page()
    sign_in(tab)
    _announced(tab, "testcluster stops for maintenance from", present=False)
    after.close()


MAIN_PAGES = (
    "/dashboard",
    "/templates",
    "/templates/new",
    "/submit/script",
    "/jobs",
    "/files",
    "/apps",
    "/apps/jupyterlab",
    "/usage",
    "/settings/notifications",
    "/settings/language",
    "/settings/appearance",
    "/settings/tokens",
)
ADMIN_PAGES = ("/admin/", "/admin/users", "/admin/projects", "/admin/announcements")


@pytest.mark.browser
@pytest.mark.parametrize("scheme", ["dark", "light"])
def test_main_pages_are_readable_in_both_colour_schemes(
    browser: Any, live_server: LiveServer, screenshots: Path, scheme: str
) -> None:
    context = browser.new_context(
        base_url=live_server.base_url, viewport=DESKTOP, color_scheme=scheme
    )
    page = context.new_page()
    sign_in(page)
    for path in MAIN_PAGES:
        page.goto(path)
        expect(page.locator("main h1").first).to_be_visible()
    background = page.evaluate("getComputedStyle(document.documentElement).backgroundColor")
    assert background == ("rgb(21, 24, 28)" if scheme == "dark" else "rgb(255, 255, 255)")
    page.goto("/usage")
    shot(page, screenshots, f"usage-{scheme}")
    open_submit_form(page)
    shot(page, screenshots, f"submit-form-{scheme}")
    context.clear_cookies()
    sign_in(page, "admin")
    for path in ADMIN_PAGES:
        page.goto(path)
        expect(page.locator("main h1").first).to_be_visible()
    shot(page, screenshots, f"admin-announcements-{scheme}")
    context.close()


@pytest.mark.browser
def test_the_users_choice_outranks_the_browser_from_the_first_paint(
    browser: Any, live_server: LiveServer
) -> None:
    context = browser.new_context(base_url=live_server.base_url, color_scheme="dark")
    page = context.new_page()
    sign_in(page, "carol")
    page.goto("/settings/appearance")
    page.get_by_label("Light").check()
    page.get_by_role("button", name="Save").click()
    expect(page.locator("html")).to_have_attribute("data-theme", "light")
    # The attribute comes in the HTML itself: the stylesheet alone decides, before any script.
    html = page.request.get("/dashboard").text()
    assert '<html lang="en" data-theme="light">' in html
    page.goto("/dashboard")
    assert (
        page.evaluate("getComputedStyle(document.documentElement).backgroundColor")
        == "rgb(255, 255, 255)"
    )
    page.goto("/settings/appearance")
    page.get_by_label("As the browser asks").check()
    page.get_by_role("button", name="Save").click()
    expect(page.locator("html")).not_to_have_attribute("data-theme", re.compile(".+"))
    # The new page's stylesheet may still be on its way once its HTML is there.
    page.wait_for_load_state()
    assert (
        page.evaluate("getComputedStyle(document.documentElement).backgroundColor")
        == "rgb(21, 24, 28)"
    )
    context.close()


@pytest.mark.browser
@pytest.mark.slurm
def test_a_finished_jobs_page_and_its_output_in_the_dark_scheme(
    browser: Any, live_server: LiveServer, screenshots: Path
) -> None:
    context = browser.new_context(
        base_url=live_server.base_url, viewport=DESKTOP, color_scheme="dark"
    )
    page = context.new_page()
    sign_in(page)
    submit_hello(page, 1, "readable in the dark")
    page.locator(STATUS_BADGE, has_text="Completed").wait_for(timeout=120_000)
    expect(page.locator("#log-stdout")).to_contain_text("readable in the dark")
    shot(page, screenshots, "job-detail-dark")
    context.close()
