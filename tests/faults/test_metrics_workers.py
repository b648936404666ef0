"""/metrics of a web process with two workers answers for both, whichever takes the scrape."""

from __future__ import annotations

import re
from pathlib import Path

import httpx

from tests.portal import PortalProcess

REQUESTS = 120
HEALTHZ = re.compile(
    r'^portal_http_requests_total\{method="GET",route="/healthz",status="\d+"\} (\S+)$', re.M
)


def _healthz_count(text: str) -> float:
    return sum(float(value) for value in HEALTHZ.findall(text))


def test_two_workers_count_together_in_every_scrape(
    faults_database_url: str, tmp_path: Path
) -> None:
    shared = tmp_path / "metrics"
    shared.mkdir()
    portal = PortalProcess(faults_database_url, tmp_path / "portal.log", poller=False, workers=2)
    portal.env["PROMETHEUS_MULTIPROC_DIR"] = str(shared)
    portal.start()
    try:
        before = _healthz_count(httpx.get(f"{portal.base_url}/metrics", timeout=10).text)
        for _ in range(REQUESTS):
            # A new connection each time, so the kernel hands them to either worker.
            httpx.get(f"{portal.base_url}/healthz", timeout=10)
        scrapes = [httpx.get(f"{portal.base_url}/metrics", timeout=10).text for _ in range(10)]
    finally:
        portal.stop()

    counting = {path.name.rsplit("_", 1)[-1] for path in shared.glob("counter_*.db")}
    assert len(counting) >= 2, f"only {counting} counted requests"
    for text in scrapes:
        assert _healthz_count(text) - before == REQUESTS
    assert len({_healthz_count(text) for text in scrapes}) == 1
