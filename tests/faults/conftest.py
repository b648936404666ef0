"""A portal process that fault tests may kill, restart and starve of its dependencies.

``portal`` starts the portal (``tests.portal.PortalProcess``: uvicorn with the in-process
poller, interval 1 s) on its own PostgreSQL database ``<worker's test database>_faults``,
migrated and seeded with the demo users once per session. Every daemon a test stops is
brought back by ``scripts/dev-cluster up`` in the test's ``finally``.
"""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from app.db import create_engine, create_sessionmaker
from app.tokens import service as tokens
from app.users.service import actor_for
from tests.factories import seeded_user_and_project
from tests.portal import ROOT, PortalProcess, seeded_database

DEV_CLUSTER = str(ROOT / "scripts" / "dev-cluster")


@pytest.fixture(scope="session")
def faults_database_url() -> str:
    return seeded_database("faults")


@pytest.fixture
def portal(faults_database_url: str, tmp_path: Path) -> Iterator[PortalProcess]:
    process = PortalProcess(faults_database_url, tmp_path / "portal.log")
    process.start()
    try:
        yield process
    finally:
        process.stop()


async def api_token(url: str, login: str, project: str) -> tuple[str, int]:
    """(a submit-scope API token for ``login``, the id of ``project``)."""
    engine = create_engine(url)
    try:
        async with create_sessionmaker(engine)() as session:
            user, found = await seeded_user_and_project(session, login, project)
            created = await tokens.create_token(
                session,
                await actor_for(session, user),
                name=f"faults-{time.monotonic_ns()}",
                scopes=["submit"],
                lifetime_days=1,
            )
            await session.commit()
            return created.secret, found.id
    finally:
        await engine.dispose()


@pytest.fixture
def alice_token(faults_database_url: str) -> tuple[str, int]:
    """(API token with the submit scope, physics project id) for alice."""
    return asyncio.run(api_token(faults_database_url, "alice", "physics"))


@pytest.fixture
def bob_token(faults_database_url: str) -> tuple[str, int]:
    """(API token with the submit scope, chemistry project id) for bob."""
    return asyncio.run(api_token(faults_database_url, "bob", "chemistry"))


def dev_cluster(*args: str) -> None:
    subprocess.run([DEV_CLUSTER, *args], check=True, capture_output=True, timeout=180)


def slurm_jobs_by_comment(since: datetime) -> dict[str, list[str]]:
    """Slurm job ids per ``--comment`` (the portal UUID) of jobs submitted since ``since``."""
    out = subprocess.run(
        [
            "sacct",
            "-a",
            "-X",
            "-P",
            "-n",
            "-o",
            "JobID,Comment",
            "-S",
            since.strftime("%Y-%m-%dT%H:%M:%S"),
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    found: dict[str, list[str]] = {}
    for line in out.splitlines():
        job_id, _, comment = line.partition("|")
        if comment:
            found.setdefault(comment, []).append(job_id)
    return found


def cancel_slurm_jobs(job_ids: list[str]) -> None:
    for start in range(0, len(job_ids), 100):
        subprocess.run(["scancel", *job_ids[start : start + 100]], check=False, capture_output=True)


def cancel_slurm_jobs_named(prefix: str) -> None:
    """Cancels every queued job whose name starts with ``prefix``, e.g. after a failed test."""
    out = subprocess.run(
        ["squeue", "-h", "-o", "%i|%j"], check=False, capture_output=True, text=True
    ).stdout
    named = [
        job_id
        for job_id, name in (line.split("|", 1) for line in out.splitlines() if "|" in line)
        if name.startswith(prefix)
    ]
    cancel_slurm_jobs(named)


def _slurm_time(moment: datetime) -> str:
    # sacct reads -S in the cluster's local time zone.
    return moment.astimezone().strftime("%Y-%m-%dT%H:%M:%S")
