"""Creates, uses and revokes an API token in Chromium, keyboard and labels only."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
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


def _me(server: LiveServer, secret: str) -> httpx.Response:
    headers = {"Authorization": f"Bearer {secret}"}
    return httpx.get(f"{server.base_url}/api/v1/me", headers=headers, timeout=30)


def test_token_is_shown_once_works_and_stops_working_when_revoked(
    page: Any, live_server: LiveServer, screenshots: Path
) -> None:
    _sign_in(page, "carol")
    page.get_by_role("link", name="API tokens").click()
    page.wait_for_url(re.compile(r".*/settings/tokens$"))
    assert page.get_by_label("admin").count() == 0
    page.get_by_label("Name").fill("notebook")
    page.get_by_label("submit", exact=True).check()
    page.get_by_role("button", name="Create token").click()
    secret = page.get_by_label("Token", exact=True).input_value()
    shot(page, screenshots, "tokens-created")
    assert secret.startswith("hpc_")
    assert _me(live_server, secret).json()["scopes"] == ["read", "submit"]
    page.goto("/settings/tokens")
    assert secret not in page.content()
    row = page.get_by_role("row", name=re.compile("notebook"))
    assert "active" in row.inner_text()
    page.get_by_role("link", name="Revoke token notebook").click()
    page.get_by_role("button", name="Yes, revoke it").click()
    page.wait_for_url(re.compile(r".*/settings/tokens$"))
    assert "revoked" in page.get_by_role("row", name=re.compile("notebook")).inner_text()
    assert _me(live_server, secret).status_code == 401
