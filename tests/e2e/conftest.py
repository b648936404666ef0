"""A live portal for end-to-end tests, shared by every test in this folder.

``live_server`` (session scope) starts ``uvicorn --factory app.main:create_app`` in a
subprocess on a free port, with the real clusters file and the in-process poller polling
every second, on its own PostgreSQL database ``<PORTAL_TEST_PG_URL database>_e2e``, migrated
and filled with the demo seed (``alice``/``alice-demo`` ...). It yields a ``LiveServer`` with
``base_url`` and ``database_url``. ``browser`` launches Debian's Chromium once; ``page`` is a
fresh context and page per test. Every page state a test goes through in a context of
``browser`` is checked with axe-core, and any violation fails the test (see ``a11y.py``).
Screenshots go to ``test-artifacts/screenshots/``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy.engine import make_url

from app.db import migrate_to_head
from tests.conftest import postgres_test_url, recreate_postgres_database

ROOT = Path(__file__).resolve().parents[2]
CLUSTERS_FILE = os.environ.get("PORTAL_CLUSTERS_FILE", "/var/lib/hpcportal-dev/clusters.toml")
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
START_TIMEOUT = 60.0
AUDIT = pytest.StashKey[Any]()


@dataclass(frozen=True)
class LiveServer:
    base_url: str
    database_url: str


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _e2e_database_url() -> str:
    url = make_url(postgres_test_url())
    return url.set(database=f"{url.database}_e2e").render_as_string(hide_password=False)


def _wait_until_up(base_url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the portal exited with status {process.returncode}")
        try:
            if httpx.get(f"{base_url}/signin", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError("the portal did not start in time")


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()


@pytest.fixture(scope="session")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    database_url = _e2e_database_url()
    recreate_postgres_database(database_url)
    migrate_to_head(database_url)
    env = {
        **os.environ,
        "PORTAL_ENV": "dev",
        "PORTAL_DATABASE_URL": database_url,
        "PORTAL_CLUSTERS_FILE": CLUSTERS_FILE,
        "PORTAL_POLL_INTERVAL": "1",
        "PORTAL_RUN_POLLER_IN_WEB": "true",
    }
    subprocess.run([sys.executable, "-m", "app.seed"], env=env, cwd=ROOT, check=True)
    port = _free_port()
    logs = tmp_path_factory.mktemp("live-server")
    server_cmd = [sys.executable, "-m", "uvicorn", "--factory", "app.main:create_app"]
    server_cmd += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
    server_cmd += ["--no-proxy-headers"]
    with (logs / "server.log").open("wb") as server_log:
        server = subprocess.Popen(
            server_cmd, env=env, cwd=ROOT, stdout=server_log, stderr=server_log
        )
        base_url = f"http://127.0.0.1:{port}"
        try:
            _wait_until_up(base_url, server)
            yield LiveServer(base_url=base_url, database_url=database_url)
        finally:
            _stop(server)


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
