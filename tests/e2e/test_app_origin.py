"""An interactive app's page, in Chromium, cannot act on the portal as its user.

The portal runs as a site would: reached at ``portal.localhost`` over a TLS front (Secure
cookies), apps at ``s-<id>.apps.portal.localhost``, a subdomain of the portal's host (the
hardest case: the app's host may set cookies for the portal's whole domain). Alice's running
session's upstream is a hostile stand-in (``hostile_app.py``) on loopback, so no Slurm is
needed. Its page tries to read the portal's CSRF token, call ``/api/v1/me``, mint a token and
plant the portal's cookies; each attempt fails, and Alice is still signed in as before.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, func, select
from sqlalchemy.orm import Session

from app.models.api_tokens import ApiToken
from app.models.base import utc_now
from app.models.interactive import InteractiveSession
from app.models.jobs import Job
from app.models.projects import Project
from app.models.users import User
from app.security import CONTENT_SECURITY_POLICY
from tests.e2e.conftest import LiveServer
from tests.e2e.hostile_app import PLANTED
from tests.e2e.shots import shot
from tests.e2e.test_jobs_flow import sign_in
from tests.portal import ROOT, START_TIMEOUT, PortalProcess, free_port, wait_for

pytestmark = pytest.mark.browser

APPS_DOMAIN = "apps.portal.localhost"
# Not a cluster the live portal polls: the stand-in's job is left running.
NO_CLUSTER = "no-such-cluster"
SECRET = "hostile-stand-in-secret-0123456789"


@dataclass(frozen=True)
class HostilePortal:
    url: str
    session_uuid: str

    @property
    def app_host(self) -> str:
        return f"s-{uuid.UUID(self.session_uuid).hex}.{APPS_DOMAIN}"


def _stand_in(port: int, portal_url: str, log: Path) -> subprocess.Popen[bytes]:
    """The hostile app, served by uvicorn on ``port`` of 127.0.0.1."""
    command = [sys.executable, "-m", "uvicorn", "tests.e2e.hostile_app:app", "--host"]
    command += ["127.0.0.1", "--port", str(port), "--log-level", "warning"]
    env = {**os.environ, "HOSTILE_PORTAL": portal_url}
    with log.open("wb") as output:
        process = subprocess.Popen(command, env=env, cwd=ROOT, stdout=output, stderr=output)

    def is_up() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"the hostile stand-in exited with {process.returncode}")
        try:
            return httpx.get(f"http://127.0.0.1:{port}/", timeout=2).status_code < 500
        except httpx.HTTPError:
            return False

    try:
        wait_for(is_up, START_TIMEOUT, "the hostile stand-in to answer", step=0.2)
    except BaseException:
        process.kill()
        process.wait(timeout=10)
        raise
    return process


def _register_session(database_url: str, port: int) -> str:
    """Alice's running session whose app listens on ``port`` of 127.0.0.1."""
    engine = create_engine(database_url)
    try:
        with Session(engine) as db:
            alice = db.scalars(select(User).where(User.login == "alice")).one()
            physics = db.scalars(select(Project).where(Project.name == "physics")).one()
            job = Job(
                uuid=str(uuid.uuid4()), owner_user_id=alice.id, project_id=physics.id,
                cluster=NO_CLUSTER, script="#!/bin/bash\n", name="jupyterlab session",
                state="running", node_list="127.0.0.1", started_at=utc_now(),
                time_limit_minutes=60,
            )  # fmt: skip
            db.add(job)
            db.flush()
            row = InteractiveSession(
                uuid=str(uuid.uuid4()), owner_user_id=alice.id, job_id=job.id,
                app="jupyterlab", values={}, port=port, secret=SECRET, ready_at=utc_now(),
            )  # fmt: skip
            db.add(row)
            db.commit()
            return row.uuid
    finally:
        engine.dispose()


def _stolen_tokens(database_url: str) -> int:
    engine = create_engine(database_url)
    try:
        with Session(engine) as db:
            query = select(func.count()).where(ApiToken.name == "stolen-by-app")
            return int(db.scalar(query) or 0)
    finally:
        engine.dispose()


@pytest.fixture
def hostile_portal(live_server: LiveServer, tmp_path: Path) -> Iterator[HostilePortal]:
    """A second portal on the live server's database, configured as a TLS site would be."""
    app_port = free_port()
    portal = PortalProcess(
        live_server.database_url,
        tmp_path / "portal.log",
        poller=False,
        env={"PORTAL_SECURE_COOKIES": "true", "PORTAL_APPS_DOMAIN": APPS_DOMAIN},
    )
    portal_url = f"http://portal.localhost:{portal.port}"
    stand_in = _stand_in(app_port, portal_url, tmp_path / "app.log")
    try:
        portal.start()
        try:
            session_uuid = _register_session(live_server.database_url, app_port)
            yield HostilePortal(portal_url, session_uuid)
        finally:
            portal.stop()
    finally:
        stand_in.terminate()
        stand_in.wait(timeout=20)


def _host_only(cookies: list[dict[str, Any]], domain: str) -> dict[str, str]:
    """The __Host- cookies a domain holds, by name: those the portal reads over TLS."""
    return {
        c["name"]: c["value"]
        for c in cookies
        if c["name"].startswith("__Host-") and c["domain"] == domain
    }


def test_an_app_page_cannot_read_call_mint_or_plant_on_the_portal(
    browser: Any, hostile_portal: HostilePortal, live_server: LiveServer, screenshots: Path
) -> None:
    context = browser.new_context(base_url=hostile_portal.url)
    page = context.new_page()
    sign_in(page)
    before = context.cookies()
    session_cookie = next(c for c in before if c["name"] == "__Host-portal_session")
    assert session_cookie["secure"] and session_cookie["httpOnly"]
    assert session_cookie["domain"] == "portal.localhost"  # host-only: no leading dot

    page.goto(f"/apps/sessions/{hostile_portal.session_uuid}/lab")
    page.wait_for_function("document.title === 'done'", timeout=30_000)
    shot(page, screenshots, "app-origin-hostile-app")
    results = json.loads(page.locator("#results").inner_text())
    (screenshots / "app-origin-hostile-app.json").write_text(json.dumps(results, indent=1))

    assert page.url.startswith(f"http://{hostile_portal.app_host}:")
    assert "portal_session" not in results["cookies_seen"]
    for attempt in ("read_csrf", "read_csrf_no_cors", "read_csrf_in_frame"):
        assert "TOKEN" not in results[attempt], results
    assert results["read_csrf"].startswith("blocked: TypeError"), results
    assert results["read_csrf_no_cors"].startswith("opaque: opaque, 0 characters"), results
    assert results["api_me"].startswith("blocked: TypeError"), results
    assert results["api_me_no_cors"] == "opaque: opaque, 0 characters", results
    assert results["mint_by_api"].startswith("blocked: TypeError"), results
    assert results["mint_by_form"] == "sent, answer opaque", results
    assert results["api_me_with_minted"] == "no token to use", results
    assert _stolen_tokens(live_server.database_url) == 0

    after = context.cookies()
    assert not [c for c in after if PLANTED in c["value"]], after
    kept = next(c for c in after if c["name"] == "app_pref")
    assert kept["domain"] == hostile_portal.app_host  # its Domain was removed
    # The script's bare-named cookies for .portal.localhost are kept by the browser; the
    # portal, over TLS, reads only its __Host- ones, which nothing from the app changed.
    assert _host_only(after, "portal.localhost") == _host_only(before, "portal.localhost")
    assert session_cookie in after

    answer = page.goto(f"{hostile_portal.url}/settings/tokens")
    assert answer is not None and answer.url.endswith("/settings/tokens"), "still signed in"
    assert answer.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert page.get_by_text("stolen-by-app").count() == 0
    shot(page, screenshots, "app-origin-portal-after")
    context.close()
