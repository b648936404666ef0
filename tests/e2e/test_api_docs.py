"""The API documentation renders in a real browser under the portal's own CSP: the page
was blank when Swagger UI came from a CDN the policy refuses."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.conftest import LiveServer

pytestmark = pytest.mark.browser


def test_api_docs_render_the_operations_with_vendored_assets(
    page: Any, live_server: LiveServer
) -> None:
    refused: list[str] = []
    outside: list[str] = []
    page.on("console", lambda m: refused.append(m.text) if "Content Security" in m.text else None)
    page.on(
        "request",
        lambda r: outside.append(r.url) if not r.url.startswith(live_server.base_url) else None,
    )
    page.goto("/api/docs")
    page.wait_for_selector(".swagger-ui .info .title", timeout=15_000)
    assert "HPC Portal" in page.inner_text(".swagger-ui .info .title")
    page.wait_for_selector(".opblock-tag", timeout=15_000)
    assert page.locator(".opblock").count() >= 10
    assert refused == [] and outside == []
