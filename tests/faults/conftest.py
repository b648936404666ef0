"""A portal process that fault tests may kill, restart and starve of its dependencies.

``portal`` starts ``uvicorn --factory app.main:create_app`` with the in-process poller
(interval 1 s) on its own PostgreSQL database ``<PORTAL_TEST_PG_URL database>_faults``,
migrated and seeded with the demo users once per session. Every daemon a test stops is
brought back by ``scripts/dev-cluster up`` in the test's ``finally``.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

import httpx
import pytest
from sqlalchemy.engine import make_url

from app.db import create_engine, create_sessionmaker, migrate_to_head
from app.tokens import service as tokens
from app.users.service import actor_for
from tests.conftest import postgres_test_url, recreate_postgres_database
from tests.e2e.conftest import CLUSTERS_FILE, _free_port
from tests.factories import seeded_user_and_project

ROOT = Path(__file__).resolve().parents[2]
DEV_CLUSTER = str(ROOT / "scripts" / "dev-cluster")
START_TIMEOUT = 60.0


def database_url(suffix: str) -> str:
    url = make_url(postgres_test_url())
    return url.set(database=f"{url.database}_{suffix}").render_as_string(hide_password=False)


def portal_env(url: str, *, poller: bool = True) -> dict[str, str]:
    return {
        **os.environ,
        "PORTAL_ENV": "dev",
        "PORTAL_DATABASE_URL": url,
        "PORTAL_CLUSTERS_FILE": CLUSTERS_FILE,
        "PORTAL_POLL_INTERVAL": "1",
        "PORTAL_RUN_POLLER_IN_WEB": "true" if poller else "false",
    }


def wait_for(check: Callable[[], bool], timeout: float, what: str, step: float = 0.5) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(step)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


class PortalProcess:
    """One uvicorn web process; ``kill()`` is SIGKILL, as an out-of-memory kill would be."""

    def __init__(self, url: str, log: Path, *, poller: bool = True, workers: int = 1) -> None:
        self.database_url = url
        self.workers = workers
        self.port = _free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.log = log
        self.env = portal_env(url, poller=poller)
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        command = [sys.executable, "-m", "uvicorn", "--factory", "app.main:create_app"]
        command += ["--host", "127.0.0.1", "--port", str(self.port), "--no-access-log"]
        command += ["--no-proxy-headers", "--workers", str(self.workers)]
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(command, env=self.env, cwd=ROOT, stdout=out, stderr=out)
        wait_for(self.is_up, START_TIMEOUT, "the portal to answer")

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def is_up(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            raise AssertionError(f"the portal exited with {self.process.returncode}")
        try:
            return httpx.get(f"{self.base_url}/healthz", timeout=2).status_code in (200, 503)
        except httpx.HTTPError:
            return False

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def errors(self) -> str:
        """The logged unhandled errors (with tracebacks), for an assertion's message."""
        if not self.log.exists():
            return ""
        lines = self.log.read_text(errors="replace").splitlines()
        starts = [i for i, line in enumerate(lines) if "unhandled error" in line]
        return "\n".join("\n".join(lines[i : i + 40]) for i in starts[:3])

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()


def seeded_database(suffix: str) -> str:
    """A fresh PostgreSQL database ``<test database>_<suffix>`` with the demo users."""
    url = database_url(suffix)
    recreate_postgres_database(url)
    migrate_to_head(url)
    seed = [sys.executable, "-m", "app.seed"]
    subprocess.run(seed, env=portal_env(url), cwd=ROOT, check=True, capture_output=True)
    return url


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
