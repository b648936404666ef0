"""The navigation, the tables with actions (sessions, tokens) and the Files page at desktop
and phone width, in English and French: a Menu button on a phone (opened, closed by Escape
with the focus back on it), one row of links at 1366 px, rows as cards whose actions are all
in view, French pages with no English, and an upload that comes back as a marked entry with
a message, then a delete that says so."""

from __future__ import annotations

import re
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect
from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session

from app.models.interactive import InteractiveSession
from app.models.jobs import Job
from app.models.projects import Project
from app.models.users import User
from tests.e2e.conftest import LiveServer
from tests.e2e.shots import shot
from tests.e2e.test_jobs_flow import sign_in
from tests.i18n_check import english_left

pytestmark = [pytest.mark.browser, pytest.mark.slurm]

SIZES = {"desktop": {"width": 1366, "height": 900}, "phone": {"width": 390, "height": 844}}
WORDS = {
    "en": {"menu": "Menu", "upload": "Upload", "token": "Create token", "delete": "Yes, delete"},
    "fr": {
        "menu": "Menu",
        "upload": "Téléverser",
        "token": "Créer le jeton",
        "delete": "Oui, supprimer",
    },
}
SAID = {
    "en": ("Uploaded notes.txt.", "Deleted notes.txt."),
    "fr": ("notes.txt a été téléversé.", "notes.txt a été supprimé."),
}


@dataclass(frozen=True)
class View:
    page: Any
    size: str
    language: str


def _ended_session(database_url: str) -> None:
    """An ended JupyterLab session of alice's, written straight into the database: its row
    has a Relaunch link, and no cluster time is spent on it."""
    engine = create_engine(database_url)
    try:
        with Session(engine) as session:
            user = session.scalars(select(User).where(User.login == "alice")).one()
            project = session.scalars(select(Project).where(Project.name == "physics")).one()
            job = Job(
                uuid=str(uuid.uuid4()),
                owner_user_id=user.id,
                project_id=project.id,
                cluster=project.cluster,
                script="#!/bin/bash\ntrue\n",
                name="jupyterlab",
                state="completed",
            )
            session.add(job)
            session.flush()
            row = InteractiveSession(
                uuid=str(uuid.uuid4()), owner_user_id=user.id, job_id=job.id, app="jupyterlab"
            )
            session.add(row)
            session.commit()
    finally:
        engine.dispose()


def as_alice(*argv: str) -> None:
    subprocess.run(["runuser", "-u", "alice", "--", *argv], check=True, capture_output=True)


@pytest.fixture
def folder() -> Iterator[str]:
    path = f"/home/alice/portal-e2e-layout-{uuid.uuid4().hex[:8]}"
    as_alice("mkdir", path)
    as_alice("touch", f"{path}/.hidden")
    yield path
    as_alice("rm", "-rf", "--", path)


@pytest.fixture(params=[f"{size}-{language}" for size in SIZES for language in WORDS])
def view(request: pytest.FixtureRequest, browser: Any, live_server: LiveServer) -> Iterator[View]:
    size, language = request.param.split("-")
    context = browser.new_context(
        base_url=live_server.base_url, viewport=SIZES[size], locale=language
    )
    yield View(context.new_page(), size, language)
    context.close()


def _fits(page: Any, screenshots: Path, name: str) -> None:
    """Nothing scrolls sideways, every link or button of the content is within the width of
    the window, and a French page has no English, English figures or tight punctuation."""
    page.wait_for_load_state()
    shot(page, screenshots, f"layout-{name}")
    if name.endswith("-fr"):
        assert english_left(page.content()) == [], page.url
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], f"{page.url} scrolls sideways: {widths}"
    outside = page.evaluate(
        """[...document.querySelectorAll('main a, main button')]
             .filter(e => e.offsetParent !== null)
             .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
             .map(e => e.textContent.trim())"""
    )
    assert outside == [], f"{page.url}: out of view: {outside}"


def _navigation(view: View) -> None:
    page = view.page
    menu = page.get_by_role("button", name=WORDS[view.language]["menu"])
    links = page.locator("#site-nav > ul > li:not(.nav-user)")
    if view.size == "desktop":
        expect(menu).to_be_hidden()
        tops = links.evaluate_all("items => items.map(item => item.getBoundingClientRect().top)")
        assert len(set(tops)) == 1, f"the navigation wraps: {tops}"
        return
    expect(links.first).to_be_hidden()
    # The page's title right under a one-row header, not under three rows of links.
    assert page.evaluate("document.querySelector('main h1').getBoundingClientRect().top") < 120
    menu.click()
    expect(menu).to_have_attribute("aria-expanded", "true")
    expect(links.first).to_be_visible()
    page.keyboard.press("Tab")
    page.keyboard.press("Escape")
    expect(menu).to_have_attribute("aria-expanded", "false")
    expect(menu).to_be_focused()
    expect(links.first).to_be_hidden()


def test_menu_cards_and_the_files_flow(
    view: View, folder: str, screenshots: Path, live_server: LiveServer
) -> None:
    page, words, name = view.page, WORDS[view.language], f"{view.size}-{view.language}"
    _ended_session(live_server.database_url)
    sign_in(page)
    _navigation(view)

    page.goto("/apps")
    expect(page.locator("#sessions-table tbody tr").first).to_be_visible()
    _fits(page, screenshots, f"apps-{name}")

    page.goto("/settings/tokens")
    page.locator("#token-name").fill(f"layout-{uuid.uuid4().hex[:6]}")
    page.get_by_role("button", name=words["token"]).click()
    expect(page.locator("#tokens-table tbody tr").first).to_be_visible()
    _fits(page, screenshots, f"tokens-{name}")

    page.goto(f"/files/testcluster?path={folder}")
    expect(page.locator("#hidden-toggle")).to_contain_text("1")
    note = {"name": "notes.txt", "mimeType": "text/plain", "buffer": b"hello\n"}
    page.set_input_files("#upload-file", files=[note])
    page.get_by_role("button", name=words["upload"], exact=True).click()
    uploaded, deleted = SAID[view.language]
    expect(page.locator("#files-message")).to_have_text(uploaded)
    expect(page.locator("#marked-entry")).to_contain_text("notes.txt")
    _fits(page, screenshots, f"files-{name}")

    page.locator("#marked-entry a[href*='/delete?']").click()
    page.get_by_role("button", name=re.compile(words["delete"])).click()
    expect(page.locator("#files-message")).to_have_text(deleted)
    expect(page.locator("#files-table tbody")).not_to_contain_text("notes.txt")
    _fits(page, screenshots, f"files-deleted-{name}")
