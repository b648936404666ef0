"""Real portal processes for every tier and for ``bench/``: one way to start them.

- ``free_port()``: a TCP port of 127.0.0.1 nothing listens on.
- ``worker_database_url(suffix)``: this pytest worker's PostgreSQL test database
  (``PORTAL_TEST_PG_URL``'s name, then ``_gw0``... under pytest-xdist), with ``_<suffix>``
  for a process tier's own database; ``scripts/lib/setup.sh``'s ``clear_test_state`` drops
  them all (``<database>_*``).
- ``seeded_database(suffix)``: that database made afresh, migrated and seeded with the demo.
- ``portal_env(url, poller=...)``: the environment of a portal process on the local cluster:
  the in-process poller every second and the timings tests would otherwise wait out
  (``TEST_TIMINGS``: the back-off ceiling after an outage) shortened.
- ``PortalProcess``: ``uvicorn --factory app.main:create_app`` on a free port (or, with
  ``serve=True``, ``python -m app.serve`` as ``scripts/run`` and the image start it, its
  workers from ``PORTAL_WEB_WORKERS``); ``start()``, ``stop()``, ``kill()`` (SIGKILL, as an
  out-of-memory kill would be), ``errors()``.
- ``PollerProcess``: ``python -m app.poller`` with its ``/metrics`` on a free port.
- ``wait_for(check, timeout, what)``: poll a condition with a deadline.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import httpx
import psycopg
from sqlalchemy.engine import make_url

ROOT = Path(__file__).resolve().parents[1]
CLUSTERS_FILE = os.environ.get("PORTAL_CLUSTERS_FILE", "/var/lib/hpcportal-dev/clusters.toml")
DEFAULT_TEST_PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/hpcportal_test"
# A deadline, not a wait: on a loaded two-core machine start-up has taken over a minute.
START_TIMEOUT = 120.0
# Production waits a minute before polling a cluster again after failures, which an outage
# test would sit through; 5 s still proves the back-off and the recovery.
TEST_TIMINGS = {"PORTAL_POLL_BACKOFF_MAX": "5"}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def worker_id() -> str | None:
    """``gw0``, ``gw1``... in a pytest-xdist worker; None in a run of one process."""
    return os.environ.get("PYTEST_XDIST_WORKER")


def worker_database_url(suffix: str | None = None) -> str:
    """This worker's test database, ``<PORTAL_TEST_PG_URL database>[_gwN][_suffix]``."""
    url = make_url(os.environ.get("PORTAL_TEST_PG_URL", DEFAULT_TEST_PG_URL))
    parts = [url.database or "hpcportal_test", worker_id(), suffix]
    name = "_".join(part for part in parts if part)
    return url.set(database=name).render_as_string(hide_password=False)


def libpq_conninfo(database_url: str, database: str | None = None) -> str:
    url = make_url(database_url).set(drivername="postgresql")
    if database is not None:
        url = url.set(database=database)
    return url.render_as_string(hide_password=False)


def recreate_postgres_database(database_url: str) -> None:
    """Make ``database_url``'s database exist and hold nothing (psycopg errors propagate)."""
    name = make_url(database_url).database
    with psycopg.connect(libpq_conninfo(database_url, "postgres"), autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
        if exists.fetchone() is None:
            conn.execute(f'CREATE DATABASE "{name}"')
    with psycopg.connect(libpq_conninfo(database_url), autocommit=True) as conn:
        conn.execute("DROP SCHEMA public CASCADE")
        conn.execute("CREATE SCHEMA public")


def portal_env(
    url: str, *, poller: bool = True, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    return {
        **os.environ,
        "PORTAL_ENV": "dev",
        "PORTAL_DATABASE_URL": url,
        "PORTAL_CLUSTERS_FILE": CLUSTERS_FILE,
        "PORTAL_POLL_INTERVAL": "1",
        "PORTAL_RUN_POLLER_IN_WEB": "true" if poller else "false",
        **TEST_TIMINGS,
        **(extra or {}),
    }


def seeded_database(suffix: str, env: Mapping[str, str] | None = None) -> str:
    """A fresh PostgreSQL database ``<worker's test database>_<suffix>`` with the demo
    (for the clusters of ``env``'s ``PORTAL_CLUSTERS_FILE`` when it names one)."""
    from app.db import migrate_to_head

    url = worker_database_url(suffix)
    recreate_postgres_database(url)
    migrate_to_head(url)
    seed = [sys.executable, "-m", "app.seed"]
    subprocess.run(seed, env=portal_env(url, extra=env), cwd=ROOT, check=True, capture_output=True)
    return url


def wait_for(check: Callable[[], bool], timeout: float, what: str, step: float = 0.5) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(step)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def _end(process: subprocess.Popen[bytes], timeout: float = 20) -> None:
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


class PortalProcess:
    """One uvicorn web process; ``kill()`` is SIGKILL, as an out-of-memory kill would be."""

    def __init__(
        self,
        url: str,
        log: Path,
        *,
        poller: bool = True,
        workers: int = 1,
        env: Mapping[str, str] | None = None,
        serve: bool = False,
    ) -> None:
        self.database_url = url
        self.workers = workers
        self.serve = serve
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.log = log
        self.env = portal_env(url, poller=poller, extra=env)
        self.process: subprocess.Popen[bytes] | None = None

    def command(self) -> list[str]:
        options = ["--host", "127.0.0.1", "--port", str(self.port), "--no-access-log"]
        options += ["--no-proxy-headers"]
        if self.serve:
            self.env["PORTAL_WEB_WORKERS"] = str(self.workers)
            return [sys.executable, "-m", "app.serve", *options]
        command = [sys.executable, "-m", "uvicorn", "--factory", "app.main:create_app"]
        return [*command, *options, "--workers", str(self.workers)]

    def start(self) -> None:
        command = self.command()
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(command, env=self.env, cwd=ROOT, stdout=out, stderr=out)
        try:
            wait_for(self.is_up, START_TIMEOUT, "the portal to answer", step=0.2)
        except BaseException:
            self.stop()  # no process outlives a start that failed
            raise

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
        if self.process is not None:
            _end(self.process)


class PollerProcess:
    """One ``python -m app.poller``, its ``/metrics`` on a free port; ``kill()`` is SIGKILL."""

    def __init__(self, url: str, log: Path, *, env: Mapping[str, str] | None = None) -> None:
        port = free_port()
        self.metrics_url = f"http://127.0.0.1:{port}/metrics"
        extra = {"PORTAL_POLLER_METRICS_PORT": str(port), **(env or {})}
        with log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "app.poller"],
                env=portal_env(url, poller=False, extra=extra),
                cwd=ROOT,
                stdout=out,
                stderr=out,
            )

    @property
    def pid(self) -> int:
        return self.process.pid

    def metric(self, sample: str) -> float | None:
        """The value of one exposed sample, e.g. ``portal_poller_lease_held{cluster="x"}``."""
        try:
            text = httpx.get(self.metrics_url, timeout=5).text
        except httpx.HTTPError:
            return None
        for line in text.splitlines():
            name, _, value = line.rpartition(" ")
            if name == sample:
                return float(value)
        return None

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        _end(self.process)
