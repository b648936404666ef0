"""Two web replicas and two pollers against one database.

A session from one web process is valid on the other; exactly one poller holds the
cluster's lease; when it is killed with SIGKILL the other takes over within two poll
intervals; a job that runs to completion across the takeover has one event per state.
"""

from __future__ import annotations

import asyncio
import re
import time
import uuid

import httpx
import psycopg
import pytest

from tests.faults.conftest import api_token, cancel_slurm_jobs
from tests.portal import PollerProcess, libpq_conninfo, wait_for
from tests.replicas.conftest import INTERVAL, Site

pytestmark = [pytest.mark.slurm, pytest.mark.slow]
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
TERMINAL = {"completed", "failed", "cancelled", "timeout", "out_of_memory", "node_fail"}


def _query(url: str, sql: str, *args: object) -> list[tuple[object, ...]]:
    with psycopg.connect(libpq_conninfo(url)) as conn:
        return list(conn.execute(sql, args).fetchall())


def _lease_holder_pid(site: Site) -> int | None:
    rows = _query(
        site.database_url,
        "SELECT holder FROM poller_leases WHERE cluster = 'testcluster' AND expires_at > now()",
    )
    return int(str(rows[0][0]).split(":")[1]) if rows else None


def test_a_session_cookie_works_on_every_replica(site: Site) -> None:
    first, second = site.webs
    with httpx.Client(base_url=first.base_url, timeout=30) as browser:
        form = browser.get("/signin")
        token = CSRF.search(form.text)
        assert token
        data = {"login": "carol", "password": "carol-demo", "csrf_token": token.group(1)}
        assert browser.post("/signin", data=data).status_code == 303
        cookies = browser.cookies
    with httpx.Client(base_url=second.base_url, cookies=cookies, timeout=30) as other:
        page = other.get("/templates")
        assert page.status_code == 200 and "Sign out" in page.text
        assert other.get("/settings/tokens").status_code == 200


def _active(site: Site) -> PollerProcess:
    pids = {p.pid: p for p in site.pollers}
    wait_for(lambda: _lease_holder_pid(site) in pids, 30, "a lease holder")
    holder = _lease_holder_pid(site)
    # The holder keeps renewing; the standby never takes it while it lives.
    for _ in range(int(3 * INTERVAL / 0.2)):
        assert _lease_holder_pid(site) == holder
        time.sleep(0.2)
    assert holder is not None
    return pids[holder]


LEASE_HELD = 'portal_poller_lease_held{cluster="testcluster"}'
OK_CYCLES = 'portal_poll_cycles_total{cluster="testcluster",outcome="ok"}'


def test_each_poller_tells_on_its_metrics_port_whether_it_polls(site: Site) -> None:
    active = _active(site)
    standby = next(p for p in site.pollers if p is not active)
    wait_for(lambda: (active.metric(OK_CYCLES) or 0) >= 1, 30, "a poll cycle on the metrics")
    assert active.metric(LEASE_HELD) == 1.0
    assert standby.metric(LEASE_HELD) == 0.0
    assert standby.metric(OK_CYCLES) is None
    for poller in site.pollers:
        rss = poller.metric("process_resident_memory_bytes")
        assert rss is not None and rss > 10 * 2**20
        elsewhere = poller.metrics_url.replace("/metrics", "/nope")
        assert httpx.get(elsewhere, timeout=5).status_code == 404
    _takeover_seconds(site, active)
    wait_for(lambda: standby.metric(LEASE_HELD) == 1.0, 4 * INTERVAL, "the survivor's gauge")


def _takeover_seconds(site: Site, dead: PollerProcess) -> float:
    dead.kill()
    killed = time.monotonic()
    survivor = next(p for p in site.pollers if p is not dead)
    deadline = killed + 4 * INTERVAL
    while time.monotonic() < deadline:
        if _lease_holder_pid(site) == survivor.pid:
            return time.monotonic() - killed
        time.sleep(0.1)
    raise AssertionError("the standby poller never took the lease")


def test_one_poller_polls_and_the_other_takes_over(site: Site) -> None:
    secret, project_id = _submit_token(site)
    headers = {"Authorization": f"Bearer {secret}"}
    body = {
        "script": "#!/bin/bash\nsleep 8\necho done\n",
        "name": f"replica-{uuid.uuid4().hex[:8]}",
        "project_id": project_id,
        "time_limit_minutes": 2,
    }
    with httpx.Client(base_url=site.webs[1].base_url, headers=headers, timeout=60) as api:
        job = api.post("/api/v1/jobs", json=body).json()
        try:
            active = _active(site)
            wait_for(lambda: _state(api, job["id"]) == "running", 60, "the job to run")
            elapsed = _takeover_seconds(site, active)
            assert elapsed <= 2 * INTERVAL, f"takeover took {elapsed:.1f} s"
            wait_for(lambda: _state(api, job["id"]) in TERMINAL, 120, "the job to end")
        finally:
            cancel_slurm_jobs([str(job["slurm_job_id"])])
    events = _query(
        site.database_url,
        "SELECT to_state, count(*) FROM job_events WHERE job_id = %s GROUP BY to_state",
        job["id"],
    )
    counts = {str(state): int(str(n)) for state, n in events}
    assert counts.get("completed") == 1 and set(counts.values()) == {1}, counts
    print(f"\ntakeover after kill -9: {elapsed:.2f} s (interval {INTERVAL:.0f} s); events {counts}")


def _state(api: httpx.Client, job_id: int) -> str:
    state: str = api.get(f"/api/v1/jobs/{job_id}").json()["state"]
    return state


def _submit_token(site: Site) -> tuple[str, int]:
    return asyncio.run(api_token(site.database_url, "alice", "physics"))
