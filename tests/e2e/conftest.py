"""A live portal for end-to-end tests, shared by every test in this folder.

``live_server`` (session scope) starts the portal (``tests.portal.PortalProcess``: uvicorn on a
free port, the real clusters file, the in-process poller polling every second) on its own
PostgreSQL database ``<worker's test database>_e2e``, migrated and filled with the demo seed
(``alice``/``alice-demo`` ...). It yields a ``LiveServer`` with
``base_url`` and ``database_url``. ``browser`` launches Debian's Chromium once; ``page`` is a
fresh context and page per test. Every page state a test goes through in a context of
``browser`` is checked with axe-core, and any violation fails the test (see ``a11y.py``).
Screenshots go to ``test-artifacts/screenshots/``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.portal import ROOT, PortalProcess, seeded_database

SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
AUDIT = pytest.StashKey[Any]()


@dataclass(frozen=True)
class LiveServer:
    base_url: str
    database_url: str


@pytest.fixture(scope="session")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    database_url = seeded_database("e2e")
    server = PortalProcess(database_url, tmp_path_factory.mktemp("live-server") / "server.log")
    server.start()
    try:
        yield LiveServer(base_url=server.base_url, database_url=database_url)
    finally:
        server.stop()


# Function-scoped on purpose: Playwright's sync API keeps an event loop running in this thread
# for as long as it is open, and every asyncio test that ran after a session-long browser
# would fail with "cannot be called from a running event loop".
@pytest.fixture
def browser(request: pytest.FixtureRequest) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    from tests.e2e.a11y import Audit, AuditedBrowser

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        audit = Audit()
        request.node.stash[AUDIT] = audit
        yield AuditedBrowser(chromium, audit)
        # Contexts closed after the test (the ``page`` fixture's) get their last scan here.
        found = audit.failure()
        chromium.close()
        if found:
            pytest.fail(found, pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """Fails a test that passed if axe-core found fault with a page state it went through."""
    result = yield
    audit = item.stash.get(AUDIT, None)
    if audit is not None:
        audit.settle_all()
        found = audit.failure()
        if found:
            pytest.fail(found, pytrace=False)
    return result


@pytest.fixture
def page(browser: Any, live_server: LiveServer) -> Iterator[Any]:
    context = browser.new_context(base_url=live_server.base_url)
    tab = context.new_page()
    yield tab
    context.close()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS
