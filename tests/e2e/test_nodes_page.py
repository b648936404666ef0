"""The nodes page in Chromium on the real cluster: reached from the dashboard, at desktop width
in English and at phone width in French."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import LiveServer
from tests.e2e.shots import shot

pytestmark = pytest.mark.browser


def _sign_in(page: Any, login: str) -> None:
    page.goto("/signin")
    page.fill("#login", login)
    page.fill("#password", f"{login}-demo")
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r".*/templates.*|.*/$|.*/dashboard.*"))


def _until_read(page: Any, timeout: float = 60) -> None:
    """Reloads until the poller has read the nodes (it does every third cycle of a second)."""
    deadline = time.monotonic() + timeout
    while page.locator("table.nodes").count() == 0:
        assert time.monotonic() < deadline, "the nodes were not read in time"
        page.wait_for_timeout(500)
        page.reload()


def test_alice_finds_the_nodes_she_may_use_on_desktop_and_phone(
    page: Any, browser: Any, live_server: LiveServer, screenshots: Path
) -> None:
    _sign_in(page, "alice")
    page.goto("/dashboard")
    page.get_by_role("link", name="Nodes you can use on testcluster").click()
    page.wait_for_url(re.compile(r".*/clusters/testcluster/nodes$"))
    _until_read(page)
    row = page.locator("table.nodes tbody tr").first
    assert re.search(r"\d+ of [1-9]\d*\s", row.inner_text()), "idle of total CPUs"
    assert "debug, long" in row.inner_text()
    summary = page.inner_text("#nodes-summary")
    assert re.match(r"Nodes that can start a job now: \d+ of \d+, with \d+ CPUs", summary)
    shot(page, screenshots, "nodes-desktop")

    page.get_by_label("Partition").select_option("long")
    page.get_by_label("Only nodes that can start a job now").check()
    page.get_by_role("button", name="Show").click()
    page.wait_for_url(re.compile(r".*partition=long&available=true"))

    french = browser.new_context(
        base_url=live_server.base_url, locale="fr-FR", viewport={"width": 390, "height": 844}
    )
    phone = french.new_page()
    _sign_in(phone, "bob")
    phone.goto("/clusters/testcluster/nodes")
    _until_read(phone)
    assert phone.get_by_role("heading", name="Nœuds sur testcluster").is_visible()
    assert phone.locator("table.nodes tbody tr").count() >= 1
    assert phone.evaluate("document.scrollingElement.scrollWidth") <= 390
    shot(phone, screenshots, "nodes-phone-fr")
    french.close()
