"""The defaults a hardened site expects, each tried as an attacker would on the live portal
(127.0.0.1 is its configured reverse proxy, 127.0.0.2 an outside visitor)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from tests.portal import PortalProcess
from tests.security.conftest import ATTACKER, PROXY, api_token, signed_in, user_id

pytestmark = [pytest.mark.slurm]
TWENTY_MB = 20 * 1024 * 1024


def _from(address: str, portal: PortalProcess) -> httpx.Client:
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(base_url=portal.base_url, transport=transport, timeout=60)


def test_metrics_and_health_details_are_for_monitoring_hosts_only(
    live_portal: PortalProcess,
) -> None:
    with _from(ATTACKER, live_portal) as outsider:
        assert outsider.get("/metrics").status_code == 404
        health = outsider.get("/healthz")
        assert health.status_code == 200 and health.json() == {"status": "ok"}
        # A forged header does not make the outsider local.
        forged = {"X-Forwarded-For": "127.0.0.1"}
        assert outsider.get("/metrics", headers=forged).status_code == 404
    with _from(PROXY, live_portal) as proxy:
        visitor = {"X-Forwarded-For": "203.0.113.20"}
        assert proxy.get("/metrics", headers=visitor).status_code == 404
        assert proxy.get("/healthz", headers=visitor).json() == {"status": "ok"}
        # The monitoring host itself (loopback, no proxy in between) sees everything.
        assert "portal_http_requests" in proxy.get("/metrics").text
        assert "testcluster" in proxy.get("/healthz").json()["clusters"]


def test_a_twenty_megabyte_body_is_refused_before_it_is_parsed(
    live_portal: PortalProcess,
) -> None:
    headers = {"Authorization": f"Bearer {api_token(live_portal, 'alice')}"}
    huge = b'{"script": "' + b"A" * TWENTY_MB + b'"}'
    with httpx.Client(base_url=live_portal.base_url, headers=headers, timeout=60) as api:
        started = time.perf_counter()
        declared = api.post(
            "/api/v1/jobs", content=huge, headers={"Content-Type": "application/json"}
        )
        elapsed = time.perf_counter() - started

        def chunks() -> Iterator[bytes]:
            for _ in range(TWENTY_MB // 65536):
                yield b"A" * 65536

        chunked = api.post(
            "/api/v1/jobs", content=chunks(), headers={"Content-Type": "application/json"}
        )
    assert declared.status_code == 413
    assert declared.json()["detail"] == "The request body is larger than 4194304 bytes."
    assert chunked.status_code == 413
    print(f"\n20 MB body refused in {elapsed * 1000:.0f} ms")


@pytest.fixture
def dave_id(live_portal: PortalProcess) -> Iterator[int]:
    found = user_id(live_portal, "dave")
    yield found
    with signed_in(live_portal, "admin") as admin:
        admin.client.post(
            f"/admin/users/{found}/active", data={"csrf_token": admin.csrf, "is_active": "true"}
        )


def test_deactivation_ends_sessions_and_tokens_for_good(
    live_portal: PortalProcess, dave_id: int
) -> None:
    token = api_token(live_portal, "dave", ["read"])
    bearer = {"Authorization": f"Bearer {token}"}
    with signed_in(live_portal, "dave") as dave, signed_in(live_portal, "admin") as admin:
        assert dave.client.get("/jobs").status_code == 200
        closed = admin.client.post(
            f"/admin/users/{dave_id}/active", data={"csrf_token": admin.csrf}
        )
        assert closed.status_code == 303
        reopened = admin.client.post(
            f"/admin/users/{dave_id}/active", data={"csrf_token": admin.csrf, "is_active": "true"}
        )
        assert reopened.status_code == 303
        # Reactivated, but the old session and token stay dead.
        again = dave.client.get("/jobs")
        assert again.status_code == 303 and again.headers["location"].startswith("/signin")
    with httpx.Client(base_url=live_portal.base_url, headers=bearer) as api:
        assert api.get("/api/v1/me").status_code == 401


def test_pages_are_not_cached_and_https_gets_hsts(live_portal: PortalProcess) -> None:
    with signed_in(live_portal, "alice") as web:
        page = web.client.get("/jobs")
        assert page.headers["cache-control"] == "no-store"
        assert "strict-transport-security" not in page.headers
        static = web.client.get("/static/vendor/htmx.min.js")
        assert static.status_code == 200 and "no-store" not in static.headers.get(
            "cache-control", ""
        )
    with _from(PROXY, live_portal) as proxy:
        secure = proxy.get("/signin", headers={"X-Forwarded-Proto": "https"})
        assert secure.headers["strict-transport-security"] == "max-age=31536000; includeSubDomains"
    with _from(ATTACKER, live_portal) as outsider:
        forged = outsider.get("/signin", headers={"X-Forwarded-Proto": "https"})
        assert "strict-transport-security" not in forged.headers


def test_api_docs_use_only_the_portals_own_assets(live_portal: PortalProcess) -> None:
    with httpx.Client(base_url=live_portal.base_url) as http:
        docs = http.get("/api/docs")
        assert docs.status_code == 200
        assert "script-src 'self';" in docs.headers["content-security-policy"]
        for asset in (
            "/static/vendor/swagger-ui/swagger-ui-bundle.js",
            "/static/vendor/swagger-ui/swagger-ui.css",
            "/static/js/api-docs.js",
        ):
            assert asset in docs.text
            assert http.get(asset).status_code == 200
        assert "cdn." not in docs.text and "<script>" not in docs.text
