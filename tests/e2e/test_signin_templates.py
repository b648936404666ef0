"""Signs in as alice in Chromium, previews a site template as she types, sees an inline error."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from app.config import Settings
from app.db import create_engine, create_sessionmaker, migrate_to_head
from app.main import create_app
from app.scheduler.fake import FakeScheduler
from app.scheduler.types import PartitionInfo
from app.seed import seed_demo
from tests.e2e.shots import shot
from tests.factories import fake_registry
from tests.portal import free_port

pytestmark = pytest.mark.browser
SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"


def _debug_partition() -> PartitionInfo:
    return PartitionInfo(
        name="debug",
        max_time=timedelta(hours=1),
        default_time=None,
        is_default=True,
        state="up",
        total_nodes=1,
        idle_nodes=1,
        total_cpus=2,
        idle_cpus=2,
    )


async def _seed(url: str) -> None:
    engine = create_engine(url)
    try:
        await seed_demo(create_sessionmaker(engine), ["testcluster"])
    finally:
        await engine.dispose()


@pytest.fixture
def portal_url(tmp_path: Path) -> Iterator[str]:
    url = f"sqlite+aiosqlite:///{tmp_path / 'portal.db'}"
    migrate_to_head(url)
    asyncio.run(_seed(url))
    fake = FakeScheduler(accounts={"alice": ["physics"]}, partitions=[_debug_partition()])
    settings = Settings(env="dev", database_url=url, run_poller_in_web=False)
    app = create_app(settings, registry=fake_registry(fake))
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "the portal did not start"
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


def test_alice_previews_and_sees_inline_error(portal_url: str, browser: Any) -> None:
    from playwright.sync_api import expect

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{portal_url}/templates")
    expect(page).to_have_url(f"{portal_url}/signin?next=%2Ftemplates")
    shot(page, SCREENSHOTS, "signin")
    page.get_by_label("Login").fill("alice")
    page.get_by_label("Password").fill("alice-demo")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Job templates")).to_be_visible()
    shot(page, SCREENSHOTS, "templates-list")

    page.get_by_role("link", name="Hello world", exact=True).click()
    page.get_by_role("link", name="Use this template").click()
    expect(page.get_by_role("heading", name="Submit: Hello world")).to_be_visible()
    message = page.get_by_label("Message")
    message.clear()
    message.press_sequentially("typed in the browser $(id)")
    # The value travels in the job's environment; the script only refers to it.
    expect(page.locator("#preview-command")).to_contain_text(
        "'PORTAL_PARAM_message=typed in the browser $(id)'"
    )
    expect(page.locator("#preview-script")).to_contain_text("${PORTAL_PARAM_message}")
    shot(page, SCREENSHOTS, "submit-preview")

    page.get_by_label("Time limit").fill("2:00:00")
    page.get_by_role("button", name="Submit job").click()
    error = page.locator("#time_limit-error")
    expect(error).to_have_text("Partition debug allows at most 1:00:00.")
    expect(page.get_by_label("Time limit")).to_have_attribute("aria-invalid", "true")
    shot(page, SCREENSHOTS, "submit-inline-error")

    page.set_viewport_size({"width": 390, "height": 844})
    shot(page, SCREENSHOTS, "submit-phone")
