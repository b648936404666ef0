"""Pooled SSH connections dropped mid-use.

Reads: the sshd session processes serving the portal's own connections (the service
identity's and alice's, found by their sockets) are killed; the next log read and the next
poll cycles succeed on fresh connections. Submits: the connection drops after sbatch ran
but before its answer arrived; the portal must not run sbatch again, and the poller
attaches the one Slurm job by the submission's UUID.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncssh
import httpx
import pytest
from sqlalchemy import select

from app.db import create_engine, create_sessionmaker
from app.jobs.requests import JobRequest
from app.jobs.service import JobService
from app.models.jobs import Job
from app.poller.cycle import poll_cluster_once
from app.scheduler.config import load_clusters
from app.scheduler.registry import build_adapter
from app.scheduler.slurm.adapter import SlurmAdapter
from app.users.service import actor_for
from tests.factories import seeded_user_and_project
from tests.faults.conftest import cancel_slurm_jobs, slurm_jobs_by_comment
from tests.portal import CLUSTERS_FILE, PortalProcess, wait_for

pytestmark = [pytest.mark.slurm, pytest.mark.slow]
SSH_PORT = 2222
PID = re.compile(r"pid=(\d+)")


def _sockets(filter_expression: str) -> list[tuple[int, int, list[int]]]:
    """(local port, peer port, pids) of established TCP sockets matching the ss filter."""
    out = subprocess.run(
        ["ss", "-tnpH", "state", "established", filter_expression],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found = []
    for line in out.splitlines():
        fields = line.split()
        local, peer = fields[2], fields[3]
        pids = [int(p) for p in PID.findall(line)]
        found.append((int(local.rsplit(":", 1)[1]), int(peer.rsplit(":", 1)[1]), pids))
    return found


def kill_sshd_sessions_of(pid: int) -> int:
    """SIGKILL the sshd processes at the far end of ``pid``'s SSH connections; how many."""
    ours = {local for local, _, pids in _sockets(f"( dport = :{SSH_PORT} )") if pid in pids}
    victims = {
        p for _, peer, pids in _sockets(f"( sport = :{SSH_PORT} )") if peer in ours for p in pids
    }
    killed = 0
    for victim in victims:
        try:
            os.kill(victim, signal.SIGKILL)
        except ProcessLookupError:
            continue  # that session had already ended: its connection is gone either way
        killed += 1
    return killed


def _poll_errors(portal: PortalProcess) -> float:
    text = httpx.get(f"{portal.base_url}/metrics", timeout=10).text
    pattern = r'portal_poll_cycles_total\{[^}]*outcome="error"[^}]*\} ([0-9.e+]+)'
    return sum(float(v) for v in re.findall(pattern, text))


def _poll_ok(portal: PortalProcess) -> float:
    text = httpx.get(f"{portal.base_url}/metrics", timeout=10).text
    pattern = r'portal_poll_cycles_total\{[^}]*outcome="ok"[^}]*\} ([0-9.e+]+)'
    return sum(float(v) for v in re.findall(pattern, text))


def _log_read(api: httpx.Client, job_id: int) -> httpx.Response:
    return api.get(f"/api/v1/jobs/{job_id}/logs/stdout")


def test_reads_survive_killed_pooled_connections(
    portal: PortalProcess, alice_token: tuple[str, int]
) -> None:
    token, project_id = alice_token
    headers = {"Authorization": f"Bearer {token}"}
    body = {
        "script": "#!/bin/bash\necho started\nsleep 120\n",
        "name": f"drop-{uuid.uuid4().hex[:8]}",
        "project_id": project_id,
        "time_limit_minutes": 5,
    }
    with httpx.Client(base_url=portal.base_url, headers=headers, timeout=60) as api:
        job = api.post("/api/v1/jobs", json=body).json()
        try:
            wait_for(lambda: "started" in _log_read(api, job["id"]).text, 60, "the job's output")
            errors_before = _poll_errors(portal)
            killed = kill_sshd_sessions_of(portal.pid)
            assert killed >= 2, "expected the service user's and alice's connections"
            answer = _log_read(api, job["id"])
            assert answer.status_code == 200 and "started" in answer.json()["data"]
            ok_after_kill = _poll_ok(portal)
            wait_for(lambda: _poll_ok(portal) >= ok_after_kill + 2, 30, "two more good polls")
            assert _poll_errors(portal) == errors_before, "a poll cycle failed on a dropped pool"
        finally:
            cancel_slurm_jobs([str(job["slurm_job_id"])])


async def _alice(url: str) -> tuple[Any, int]:
    engine = create_engine(url)
    try:
        async with create_sessionmaker(engine)() as session:
            user, project = await seeded_user_and_project(session)
            return await actor_for(session, user), project.id
    finally:
        await engine.dispose()


def _drop_reply_after_sbatch(adapter: SlurmAdapter, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The connection dies after sbatch ran on the cluster, before its answer arrived."""
    transport = adapter.ssh
    real = transport._exec
    dropped: list[str] = []

    async def lossy(conn: Any, command: str, stdin: str | None, output: Any) -> Any:
        result = await real(conn, command, stdin, output)
        submits = " sbatch " in f" {command} " and "--test-only" not in command
        if submits and not dropped:
            dropped.append(command)
            conn.abort()
            raise asyncssh.ConnectionLost("connection reset")
        return result

    monkeypatch.setattr(transport, "_exec", lossy)
    return dropped


async def _submit_and_reconcile(url: str, adapter: SlurmAdapter, name: str) -> Job:
    actor, project_id = await _alice(url)
    engine = create_engine(url)
    sessionmaker = create_sessionmaker(engine)
    registry = {"testcluster": adapter}
    try:
        service = JobService(sessionmaker, registry)  # type: ignore[arg-type]
        request = JobRequest(
            project_id=project_id,
            # Short: Slurm 22.05 writes the comment (the UUID) to accounting when the job
            # ends, and the test waits for that record.
            script="#!/bin/bash\nsleep 3\n",
            name=name,
            time_limit_minutes=2,
        )
        job = await service.submit(actor, request, None)
        assert job.state == "submitting" and job.slurm_job_id is None
        # Past the submit grace: the poller now looks for the submission's UUID.
        later = datetime.now(UTC) + timedelta(minutes=2)
        await poll_cluster_once(sessionmaker, "testcluster", adapter, now=later)
        async with sessionmaker() as session:
            return (await session.scalars(select(Job).where(Job.id == job.id))).one()
    finally:
        await engine.dispose()
        await adapter.close()


def test_a_submit_whose_answer_was_lost_is_reconciled_not_repeated(
    faults_database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    adapter = build_adapter(load_clusters(CLUSTERS_FILE)["testcluster"])
    dropped = _drop_reply_after_sbatch(adapter, monkeypatch)
    since = datetime.now(UTC) - timedelta(minutes=1)
    name = f"lost-reply-{uuid.uuid4().hex[:8]}"
    job = asyncio.run(_submit_and_reconcile(faults_database_url, adapter, name))
    found: list[str] = []
    try:
        assert dropped, "the answer of sbatch was never lost"
        wait_for(lambda: job.uuid in slurm_jobs_by_comment(since), 60, "the accounting record")
        found = slurm_jobs_by_comment(since)[job.uuid]
        assert found == [job.slurm_job_id], f"Slurm has {found}, the row {job.slurm_job_id}"
        assert job.state not in ("submitting", "submit_failed")
    finally:
        cancel_slurm_jobs(found)
