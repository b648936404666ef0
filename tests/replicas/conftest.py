"""Two web processes and two pollers on one PostgreSQL database, as a multi-replica site runs.

``site`` starts two web processes (no poller inside) and two ``python -m app.poller``
processes (``tests.portal``) (interval ``INTERVAL``) on a fresh database
``<PORTAL_TEST_PG_URL database>_replicas`` seeded with the demo users.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.portal import PollerProcess, PortalProcess, seeded_database

INTERVAL = 2.0


def start_poller(url: str, log: Path) -> PollerProcess:
    """A ``python -m app.poller`` polling every ``INTERVAL`` seconds."""
    return PollerProcess(url, log, env={"PORTAL_POLL_INTERVAL": str(INTERVAL)})


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
        pollers += [start_poller(url, tmp_path / f"poller{i}.log") for i in range(2)]
        yield Site(url, webs, pollers)
    finally:
        for poller in pollers:
            poller.stop()
        for web in webs:
            web.stop()
