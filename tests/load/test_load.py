"""200 signed-in users against a web process and a separate poller on PostgreSQL.

The CI-sized version of ``bench/bench_load.py``: the same users, pages and API calls for
``DURATION`` seconds, paced as people with a live job page open (``THINK``). It asserts
behaviour, not speed: no request fails, every kind of page was served, the poller kept
polling the real cluster throughout, and neither process's memory grows once warm.
The ten-minute run with figures is the benchmark.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bench.bench_load import LOGINS, Load, Results, drive, seed
from tests.portal import PollerProcess, PortalProcess, seeded_database
from tests.replicas.conftest import INTERVAL, start_poller

# Alone: 200 users for 90 s on a machine the other lanes also load would judge the CPU the
# web process was left with (a starved worker's requests time out), not the portal.
pytestmark = [pytest.mark.slurm, pytest.mark.slow, pytest.mark.alone]

USERS = 200
JOBS = 5_000
DURATION = 90.0
THINK = 1.0
WARM_UP = 30.0
# Growth allowed after the warm-up: allocator noise is a few MB; a leak of one object per
# request would be tens of MB over the ~15,000 requests of a run.
MAX_GROWTH_MB = 12.0
ENDPOINTS = {"GET /jobs", "GET /jobs/{id}", "GET /jobs/{id}/status", "GET /api/v1/jobs"}
OK_CYCLES = 'portal_poll_cycles_total{cluster="testcluster",outcome="ok"}'
LEASE_HELD = 'portal_poller_lease_held{cluster="testcluster"}'


@dataclass
class Stack:
    web: PortalProcess
    poller: PollerProcess
    ids: dict[str, list[int]]
    secrets: list[str]


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Stack]:
    url = seeded_database("loadtest")
    ids, secrets = asyncio.run(seed(url, JOBS, USERS))
    web = PortalProcess(url, tmp_path / "web.log", poller=False)
    poller: PollerProcess | None = None
    try:
        web.start()
        poller = start_poller(url, tmp_path / "poller.log")
        yield Stack(web, poller, ids, secrets)
    finally:
        if poller is not None:
            poller.stop()
        web.stop()


def _growth_after_warm_up(marks: list[tuple[float, float]]) -> float:
    settled = [mb for seconds, mb in marks if seconds >= WARM_UP]
    assert len(settled) >= 5, marks
    return max(settled) - settled[0]


def test_two_hundred_users_get_every_page_while_the_poller_polls(stack: Stack) -> None:
    cycles_before = stack.poller.metric(OK_CYCLES) or 0.0
    logins = [LOGINS[i % len(LOGINS)] for i in range(USERS)]
    pids = {"web": stack.web.pid, "poller": stack.poller.pid}
    load = Load(stack.web.base_url, pids, logins, stack.secrets, stack.ids, DURATION, THINK)
    results = Results()
    _, seconds = asyncio.run(drive(load, results))

    assert sum(results.errors.values()) == 0, dict(results.causes)
    assert set(results.latencies) == ENDPOINTS
    for kind, samples in results.latencies.items():
        # Each user reaches every page several times even when answers slow down.
        assert len(samples) >= USERS, (kind, len(samples))
    cycles = (stack.poller.metric(OK_CYCLES) or 0.0) - cycles_before
    assert cycles >= seconds / INTERVAL / 2, f"{cycles:.0f} poll cycles in {seconds:.0f} s"
    assert stack.poller.metric(LEASE_HELD) == 1.0
    growth = {name: _growth_after_warm_up(marks) for name, marks in results.rss.items()}
    assert set(growth) == {"web", "poller"}
    assert all(mb <= MAX_GROWTH_MB for mb in growth.values()), growth
    total = sum(len(v) for v in results.latencies.values())
    print(f"\n{total} requests in {seconds:.0f} s, 0 errors; {cycles:.0f} poll cycles; {growth}")
