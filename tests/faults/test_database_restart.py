"""Restart PostgreSQL under a serving portal (uvicorn, poller inside, 1 s cycles).

Without restarting the portal, requests succeed again once the database is back (dead
pooled connections are replaced, not handed out), every later request succeeds, and the
poller's next cycles write to ``cluster_status`` again.
"""

from __future__ import annotations

import subprocess
import time
from datetime import datetime

import httpx
import psycopg
import pytest

from tests.portal import PortalProcess, libpq_conninfo, wait_for

# alone: it restarts the PostgreSQL that every other run of the machine uses.
pytestmark = [pytest.mark.slurm, pytest.mark.slow, pytest.mark.alone]
RESTART = ["pg_ctlcluster", "--skip-systemctl-redirect", "15", "main", "restart"]


def _last_contact(url: str) -> datetime | None:
    try:
        with psycopg.connect(libpq_conninfo(url)) as conn:
            row = conn.execute(
                "SELECT last_contact_at FROM cluster_status WHERE cluster = 'testcluster'"
            ).fetchone()
    except psycopg.OperationalError:
        return None
    return row[0] if row else None


def _answers(api: httpx.Client) -> bool:
    try:
        return api.get("/api/v1/jobs").status_code == 200
    except httpx.HTTPError:
        return False


def test_portal_recovers_from_a_database_restart(
    portal: PortalProcess, alice_token: tuple[str, int]
) -> None:
    token, _ = alice_token
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=portal.base_url, headers=headers, timeout=30) as api:
        wait_for(lambda: _last_contact(portal.database_url) is not None, 30, "a first poll")
        # Fill the pool with connections that the restart will kill.
        for _ in range(20):
            assert api.get("/api/v1/jobs").status_code == 200
            assert api.get("/api/v1/me").status_code == 200
        subprocess.run(RESTART, check=True, capture_output=True, timeout=120)
        restarted = time.time()
        wait_for(lambda: _answers(api), 30, "the API after the restart")
        statuses = [api.get(path).status_code for path in ("/api/v1/jobs", "/api/v1/me") * 20]
        assert set(statuses) == {200}, statuses
        assert httpx.get(f"{portal.base_url}/signin", timeout=30).status_code == 200

        def polled_again() -> bool:
            last = _last_contact(portal.database_url)
            return last is not None and last.timestamp() > restarted

        wait_for(polled_again, 60, "a poll cycle written after the restart")
