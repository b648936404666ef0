"""SIGKILL the active poller around a job's end; the standby takes over and notifies once.

Two real ``python -m app.poller`` processes (1 s cycles) on their own PostgreSQL database
with the real dev cluster, a real SMTP server (aiosmtpd) and an HTTP webhook receiver on
this machine. alice has an e-mail rule and a webhook rule for her jobs' ends; her short job
ends while the active poller is killed. Exactly one e-mail and one validly signed webhook
arrive: the outbox row commits with the state change, and a claimed row is sent once.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from collections.abc import Iterator
from email.message import Message
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from app.db import create_engine, create_sessionmaker
from app.jobs.requests import JobRequest
from app.jobs.service import JobService
from app.models.clusters import PollerLease
from app.models.jobs import Job
from app.models.notifications import Notification, NotificationRule
from app.notifications import signing
from app.scheduler.config import load_clusters
from app.scheduler.registry import build_adapter
from app.users.service import actor_for
from tests.factories import seeded_user_and_project
from tests.notify_servers import Mailbox, Received, Receiver, smtp_server, webhook_receiver
from tests.portal import CLUSTERS_FILE, PollerProcess, seeded_database, wait_for

pytestmark = [pytest.mark.slurm, pytest.mark.slow]
CLUSTER = "testcluster"
JOB_SECONDS = 4
# After the first delivery, how long to keep listening for a duplicate: several cycles of
# the standby (1 s each) and more than its takeover time.
QUIET_SECONDS = 5.0


@pytest.fixture(scope="module")
def database() -> str:
    return seeded_database("notify")


def _env(smtp_port: int) -> dict[str, str]:
    return {
        "PORTAL_USAGE_INGEST_INTERVAL": "0",
        "PORTAL_SMTP_HOST": "127.0.0.1",
        "PORTAL_SMTP_PORT": str(smtp_port),
        "PORTAL_SMTP_SECURITY": "none",
        # The receiver listens on loopback, which only tests allow.
        "PORTAL_WEBHOOK_ALLOW_PRIVATE": "true",
    }


async def _add_rules(url: str, hook_url: str) -> str:
    """alice's e-mail and webhook rules for every job's end; returns the webhook's secret."""
    engine = create_engine(url)
    try:
        async with create_sessionmaker(engine)() as session:
            alice, _ = await seeded_user_and_project(session, "alice", "physics")
            secret = signing.new_secret()
            session.add(NotificationRule(user_id=alice.id, event="ended", channel="email"))
            session.add(
                NotificationRule(
                    user_id=alice.id,
                    event="ended",
                    channel="webhook",
                    webhook_url=hook_url,
                    secret=secret,
                )
            )
            await session.commit()
            return secret
    finally:
        await engine.dispose()


async def _submit(url: str) -> tuple[int, str]:
    """alice's short job, submitted as the web process would; returns its id and name."""
    engine = create_engine(url)
    adapter = build_adapter(load_clusters(Path(CLUSTERS_FILE))[CLUSTER], "ssh")
    try:
        sessionmaker = create_sessionmaker(engine)
        async with sessionmaker() as session:
            alice, physics = await seeded_user_and_project(session, "alice", "physics")
            actor = await actor_for(session, alice)
        request = JobRequest(
            project_id=physics.id,
            script=f"#!/bin/bash\nsleep {JOB_SECONDS}\n",
            name=f"notify-fault-{time.monotonic_ns()}",
            time_limit_minutes=2,
            memory_mb=100,
            stdout_path="/scratch/alice/notify-fault-%j.out",
        )
        job = await JobService(sessionmaker, {CLUSTER: adapter}).submit(actor, request)
        return job.id, job.name
    finally:
        await adapter.close()
        await engine.dispose()


async def _read(url: str, query: Any) -> list[Any]:
    engine = create_engine(url)
    try:
        async with create_sessionmaker(engine)() as session:
            return list(await session.scalars(query))
    finally:
        await engine.dispose()


def _read_now(url: str, query: Any) -> list[Any]:
    return asyncio.run(_read(url, query))


def _holder(url: str) -> str | None:
    found = _read_now(url, select(PollerLease.holder).where(PollerLease.cluster == CLUSTER))
    return str(found[0]) if found else None


def _job(url: str, job_id: int) -> Job:
    [job] = _read_now(url, select(Job).where(Job.id == job_id))
    assert isinstance(job, Job)
    return job


@pytest.fixture
def receivers() -> Iterator[tuple[Mailbox, int, Receiver, str]]:
    with smtp_server() as (mailbox, port), webhook_receiver() as (receiver, hook_url):
        yield mailbox, port, receiver, hook_url


def _kill_just_before_the_end(url: str, job_id: int, poller: PollerProcess) -> float:
    """SIGKILL ``poller`` half a second before the job's end; returns when (time.time())."""
    wait_for(lambda: _job(url, job_id).started_at is not None, 60, "the job to start")
    started = _job(url, job_id).started_at
    assert started is not None
    # Slurm's start time is whole seconds, so the job ends 4 to 5 s after it.
    time.sleep(max(0.0, started.timestamp() + JOB_SECONDS - 0.5 - time.time()))
    killed_at = time.time()
    poller.kill()
    return killed_at


# alice's jobs of earlier runs, still in the queue for MinJobAge, are found as jobs submitted
# outside the portal and notified too: only this job's notifications are counted.
def _emails_about(mailbox: Mailbox, name: str) -> list[tuple[list[str], Message]]:
    return [(to, message) for to, message in mailbox.messages if name in message["Subject"]]


def _webhooks_about(receiver: Receiver, job_id: int) -> list[Received]:
    return [r for r in receiver.requests if json.loads(r.body)["job"]["id"] == job_id]


def test_standby_sends_one_email_and_one_webhook_when_the_active_poller_is_killed(
    database: str, receivers: tuple[Mailbox, int, Receiver, str], tmp_path: Path
) -> None:
    mailbox, smtp_port, receiver, hook_url = receivers
    secret = asyncio.run(_add_rules(database, hook_url))
    env = _env(smtp_port)
    active = PollerProcess(database, tmp_path / "active.log", env=env)
    standby: PollerProcess | None = None
    job_id: int | None = None
    try:
        wait_for(lambda: _holder(database) is not None, 30, "the first poller's lease")
        first_holder = _holder(database)
        standby = PollerProcess(database, tmp_path / "standby.log", env=env)
        job_id, name = asyncio.run(_submit(database))
        killed_at = _kill_just_before_the_end(database, job_id, active)
        wait_for(lambda: _holder(database) != first_holder, 15, "the standby's takeover")
        wait_for(
            lambda: bool(_emails_about(mailbox, name)) and bool(_webhooks_about(receiver, job_id)),
            30,
            "the e-mail and the webhook",
        )
        time.sleep(QUIET_SECONDS)
        emails, hooks = _emails_about(mailbox, name), _webhooks_about(receiver, job_id)
        assert len(emails) == 1, [m["Subject"] for _, m in emails]
        assert len(hooks) == 1, [r.body for r in hooks]
        [(recipients, message)] = emails
        assert recipients == ["alice@example.org"]
        assert message["Subject"] == f"Job {name} ended: completed"
        [request] = hooks
        assert signing.is_valid(secret, request.body, request.headers["X-Portal-Signature"])
        rows = _read_now(database, select(Notification).where(Notification.job_id == job_id))
        assert [(r.status, r.attempts) for r in rows] == [("sent", 1), ("sent", 1)]
        # Written after the kill: the standby recorded the end and its notifications.
        assert all(r.created_at.timestamp() > killed_at for r in rows)
    finally:
        active.kill()
        if standby is not None:
            standby.stop()
        slurm_id = _job(database, job_id).slurm_job_id if job_id is not None else None
        if slurm_id:
            subprocess.run(["scancel", slurm_id], check=False, capture_output=True)
