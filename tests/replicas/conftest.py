"""Two web processes and two pollers on one PostgreSQL database, as a multi-replica site runs.

``site`` starts two ``uvicorn`` web processes (no poller inside) and two
``python -m app.poller`` processes (interval ``INTERVAL``) on a fresh database
``<PORTAL_TEST_PG_URL database>_replicas`` seeded with the demo users.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import _free_port
from tests.faults.conftest import ROOT, PortalProcess, portal_env, seeded_database

INTERVAL = 2.0


class PollerProcess:
    def __init__(self, url: str, log: Path) -> None:
        self.metrics_url = f"http://127.0.0.1:{(port := _free_port())}/metrics"
        env = portal_env(url, poller=False) | {
            "PORTAL_POLL_INTERVAL": str(INTERVAL),
            "PORTAL_POLLER_METRICS_PORT": str(port),
        }
        with log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "app.poller"], env=env, cwd=ROOT, stdout=out, stderr=out
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
        self.process.kill()
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()


@dataclass
class Site:
    database_url: str
    webs: list[PortalProcess]
    pollers: list[PollerProcess]


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    url = seeded_database("replicas")
    webs = [PortalProcess(url, tmp_path / f"web{i}.log", poller=False) for i in range(2)]
    pollers: list[PollerProcess] = []
    try:
        for web in webs:
            web.start()
        pollers += [PollerProcess(url, tmp_path / f"poller{i}.log") for i in range(2)]
        yield Site(url, webs, pollers)
    finally:
        for poller in pollers:
            poller.stop()
        for web in webs:
            web.stop()
