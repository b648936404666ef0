"""The portal as ``scripts/run`` and the image start it: ``python -m app.serve`` with two web
workers, the poller inside each, on PostgreSQL and on the SQLite file ``scripts/run`` uses.

Exactly one worker polls each cluster (the lease) while both run a poller; jobs submitted
through either worker are followed once each (one event per state), and one sent to both at
once with one Idempotency-Key is one job; wrong passwords sent in parallel to both workers are
throttled as one count. Every request opens its own connection, so the kernel hands them to
either worker; the metrics files show both served.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import psycopg
import pytest

from app.db import is_sqlite_url, migrate_to_head
from tests.faults.conftest import api_token, cancel_slurm_jobs
from tests.portal import ROOT, PortalProcess, libpq_conninfo, portal_env, seeded_database, wait_for

pytestmark = [pytest.mark.slurm, pytest.mark.slow]
CLUSTER = "testcluster"
JOBS = 6
GUESSES = 12
MAX_FAILURES = 5  # app.users.throttle.MAX_FAILURES
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
LEASE_HELD = re.compile(
    rf'^portal_poller_lease_held\{{cluster="{CLUSTER}",pid="(\d+)"\}} (\S+)$', re.M
)
TERMINAL = {"completed", "failed", "cancelled", "timeout", "out_of_memory", "node_fail"}


def _sqlite_database(folder: Path) -> str:
    url = f"sqlite+aiosqlite:///{folder / 'portal.db'}"
    migrate_to_head(url)
    seed = [sys.executable, "-m", "app.seed"]
    subprocess.run(seed, env=portal_env(url), cwd=ROOT, check=True, capture_output=True)
    return url


def _query(url: str, sql: str, *args: object) -> list[tuple[object, ...]]:
    if is_sqlite_url(url):
        with sqlite3.connect(url.split("///", 1)[1]) as conn:
            return list(conn.execute(sql.replace("%s", "?"), args).fetchall())
    with psycopg.connect(libpq_conninfo(url)) as conn:
        return list(conn.execute(sql, args).fetchall())


@pytest.fixture(params=["postgresql", "sqlite"])
def portal(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[PortalProcess]:
    backend = request.param
    url = seeded_database("workers") if backend == "postgresql" else _sqlite_database(tmp_path)
    metrics = tmp_path / "metrics"
    metrics.mkdir()
    # A lease lasts 1.5 poll intervals: with the suite loading both cores, a 1 s interval let
    # one slow cycle lose it to the other worker, which is the lease working, not two pollers.
    env = {"PROMETHEUS_MULTIPROC_DIR": str(metrics), "PORTAL_POLL_INTERVAL": "3"}
    process = PortalProcess(url, tmp_path / "portal.log", workers=2, env=env, serve=True)
    process.start()
    try:
        yield process
    finally:
        process.stop()


def _workers(portal: PortalProcess) -> set[int]:
    """The worker processes uvicorn's supervisor started (its children that serve)."""
    children = Path(f"/proc/{portal.pid}/task/{portal.pid}/children").read_text().split()
    return {int(pid) for pid in children}


def _lease_holder_pid(portal: PortalProcess) -> int | None:
    rows = _query(
        portal.database_url, "SELECT holder FROM poller_leases WHERE cluster = %s", CLUSTER
    )
    return int(str(rows[0][0]).split(":")[1]) if rows else None


def _lease_gauges(portal: PortalProcess) -> dict[int, float]:
    text = httpx.get(f"{portal.base_url}/metrics", timeout=10).text
    return {int(pid): float(value) for pid, value in LEASE_HELD.findall(text)}


def _served_by(portal: PortalProcess) -> set[str]:
    metrics = Path(portal.env["PROMETHEUS_MULTIPROC_DIR"])
    return {path.stem.rsplit("_", 1)[-1] for path in metrics.glob("counter_*.db")}


def test_one_worker_polls_each_cluster_and_jobs_from_both_are_followed_once(
    portal: PortalProcess,
) -> None:
    workers = _workers(portal)
    wait_for(lambda: _lease_holder_pid(portal) in workers, 60, "a worker to hold the lease")
    holder = _lease_holder_pid(portal)
    wait_for(lambda: len(_lease_gauges(portal)) >= 2, 30, "both workers' pollers to report")
    # Renewed by its holder, never taken by the other worker's poller meanwhile.
    for _ in range(20):
        assert _lease_holder_pid(portal) == holder
        gauges = _lease_gauges(portal)
        assert sum(gauges.values()) == 1.0 and gauges.get(holder) == 1.0, gauges
        time.sleep(0.2)

    secret, jobs = _submit_through_both(portal)
    try:
        for job in jobs:
            ended = lambda job=job: _state(portal, secret, job) in TERMINAL  # noqa: E731
            wait_for(ended, 180, "the jobs to end")
    finally:
        cancel_slurm_jobs([str(job["slurm_job_id"]) for job in jobs])
    for job in jobs:
        events = _query(
            portal.database_url,
            "SELECT to_state, count(*) FROM job_events WHERE job_id = %s GROUP BY to_state",
            job["id"],
        )
        counts = {str(state): int(str(n)) for state, n in events}
        assert counts.get("completed") == 1 and set(counts.values()) == {1}, counts
    ids = [job["slurm_job_id"] for job in jobs]
    assert len(set(ids)) == JOBS + 1
    assert len(_served_by(portal)) >= 2, "one worker served every request"
    assert not portal.errors()


def _token(portal: PortalProcess) -> tuple[str, int]:
    return asyncio.run(api_token(portal.database_url, "alice", "physics"))


def _submit(
    portal: PortalProcess, secret: str, project_id: int, key: str | None = None
) -> dict[str, object]:
    body = {
        "script": "#!/bin/bash\nsleep 1\necho done\n",
        "name": f"workers-{uuid.uuid4().hex[:8]}",
        "project_id": project_id,
        "time_limit_minutes": 2,
    }
    headers = {"Authorization": f"Bearer {secret}", **({"Idempotency-Key": key} if key else {})}
    # A new client per request: a new connection, which either worker may accept.
    response = httpx.post(f"{portal.base_url}/api/v1/jobs", json=body, headers=headers, timeout=60)
    assert response.status_code in (200, 201), response.text
    job: dict[str, object] = response.json()
    return job


def _submit_through_both(portal: PortalProcess) -> tuple[str, list[dict[str, object]]]:
    """``JOBS`` jobs one after another, then one job sent four times at once with one
    Idempotency-Key: whichever workers take them, it is one job."""
    secret, project_id = _token(portal)
    jobs = [_submit(portal, secret, project_id) for _ in range(JOBS)]
    key = f"workers-{uuid.uuid4().hex}"
    with ThreadPoolExecutor(max_workers=4) as pool:
        same = list(pool.map(lambda _: _submit(portal, secret, project_id, key), range(4)))
    assert len({job["id"] for job in same}) == 1, same
    rows = _query(portal.database_url, "SELECT count(*) FROM jobs WHERE idempotency_key = %s", key)
    assert rows == [(1,)]
    return secret, [*jobs, same[0]]


def _state(portal: PortalProcess, secret: str, job: dict[str, object]) -> str:
    headers = {"Authorization": f"Bearer {secret}"}
    answer = httpx.get(f"{portal.base_url}/api/v1/jobs/{job['id']}", headers=headers, timeout=30)
    state: str = answer.json()["state"]
    return state


def _guess(portal: PortalProcess, password: str) -> int:
    with httpx.Client(base_url=portal.base_url, timeout=60) as browser:
        token = CSRF.search(browser.get("/signin").text)
        assert token
        data = {"login": "carol", "password": password, "csrf_token": token.group(1)}
        return browser.post("/signin", data=data).status_code


def test_parallel_wrong_passwords_through_both_workers_are_throttled_as_one(
    portal: PortalProcess,
) -> None:
    with ThreadPoolExecutor(max_workers=GUESSES) as pool:
        statuses = list(pool.map(lambda _: _guess(portal, "wrong"), range(GUESSES)))

    assert sorted(statuses) == [401] * MAX_FAILURES + [429] * (GUESSES - MAX_FAILURES)
    # The kernel gives each connection to whichever worker accepts first, which may be the
    # same one every time: more wrong guesses, in bursts, until both have answered. Each one
    # is refused, whichever worker takes it: a worker counting on its own would say 401.
    for _ in range(20):
        if len(_served_by(portal)) >= 2:
            break
        with ThreadPoolExecutor(max_workers=4) as pool:
            more = list(pool.map(lambda _: _guess(portal, "wrong"), range(4)))
        assert more == [429] * 4, more
    assert len(_served_by(portal)) >= 2, "one worker served every request"
    assert _guess(portal, "carol-demo") == 429, "the right password waits out the window too"
