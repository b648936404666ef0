"""Stop one cluster daemon while the portal serves pages and the API.

Each outage lasts 12 s: long enough for the poller's back-off (1 s interval, doubling) to
reach its ceiling, ``PORTAL_POLL_BACKOFF_MAX`` (5 s here, ``tests.portal.TEST_TIMINGS``; a
minute in production), so recovery also proves a backed-off poller comes back on its own.
Pages and the API never answer 500, a running job never gets a terminal state, the cluster
shows the failure in /healthz while the poller depends on the daemon, and everything comes
back on its own after ``scripts/dev-cluster up``. With sshd down, established connections
keep working but new ones fail: a submit by someone with no pooled connection gets a 503
that says so, and leaves no row waiting for an answer.
"""

from __future__ import annotations

import time
import uuid

import httpx
import pytest

from tests.faults.conftest import cancel_slurm_jobs, dev_cluster
from tests.portal import PortalProcess, wait_for

pytestmark = [pytest.mark.slurm, pytest.mark.slow]
OUTAGE_SECONDS = 12.0
# The poller runs squeue over SSH, which asks slurmctld: that outage must show. Stopping
# sshd's listener leaves established connections working, and the poller's is pooled, so
# polling carries on; slurmdbd and slurmrestd are not on its path.
POLLER_DEPENDS_ON = {"slurmctld"}
TERMINAL = {"completed", "failed", "cancelled", "timeout", "out_of_memory", "node_fail"}


def _cluster(portal: PortalProcess) -> dict[str, object]:
    body = httpx.get(f"{portal.base_url}/healthz", timeout=10).json()
    cluster: dict[str, object] = body["clusters"]["testcluster"]
    return cluster


def _submit_sleeper(api: httpx.Client, project_id: int) -> dict[str, object]:
    body = {
        "script": "#!/bin/bash\nsleep 300\n",
        "name": f"outage-{uuid.uuid4().hex[:8]}",
        "project_id": project_id,
        "time_limit_minutes": 10,
    }
    response = api.post("/api/v1/jobs", json=body)
    assert response.status_code == 201, response.text
    job: dict[str, object] = response.json()
    return job


def _assert_surfaces_up(portal: PortalProcess, api: httpx.Client, job_id: object) -> None:
    for path in ("/healthz", "/signin", "/jobs"):
        assert httpx.get(f"{portal.base_url}{path}", timeout=30).status_code < 500, path
    listed = api.get("/api/v1/jobs")
    assert listed.status_code == 200
    state = api.get(f"/api/v1/jobs/{job_id}").json()["state"]
    assert state not in TERMINAL, f"the job became {state} during the outage"


@pytest.mark.parametrize("daemon", ["slurmctld", "slurmdbd", "slurmrestd", "sshd"])
def test_portal_survives_a_daemon_outage(
    portal: PortalProcess,
    alice_token: tuple[str, int],
    bob_token: tuple[str, int],
    daemon: str,
) -> None:
    token, project_id = alice_token
    headers = {"Authorization": f"Bearer {token}"}
    slurm_ids: list[str] = []
    with httpx.Client(base_url=portal.base_url, headers=headers, timeout=60) as api:
        job = _submit_sleeper(api, project_id)
        slurm_ids.append(str(job["slurm_job_id"]))
        try:
            _outage_and_recovery(portal, api, job, daemon, bob_token)
        finally:
            cancel_slurm_jobs(slurm_ids)


def _new_connection_refused(portal: PortalProcess, bob: tuple[str, int]) -> str:
    """bob has no pooled connection yet: his submit needs a new one, which sshd refuses."""
    token, project_id = bob
    name = f"outage-new-{uuid.uuid4().hex[:8]}"
    body = {"script": "#!/bin/bash\ntrue\n", "name": name, "project_id": project_id}
    answer = httpx.post(
        f"{portal.base_url}/api/v1/jobs",
        json=body,
        headers={"Authorization": f"Bearer {token}"},
        timeout=60,
    )
    assert answer.status_code == 503, (answer.status_code, answer.text[:300])
    assert answer.json()["error"] == "ServiceUnavailable" and answer.json()["detail"]
    return name


def _bob_rows_settled(portal: PortalProcess, bob: tuple[str, int], name: str) -> bool:
    """Nothing lost: no row of the refused submit is left waiting for an answer."""
    headers = {"Authorization": f"Bearer {bob[0]}"}
    listed = httpx.get(f"{portal.base_url}/api/v1/jobs", headers=headers, timeout=30).json()
    return all(j["state"] != "submitting" for j in listed["items"] if j["name"] == name)


def _outage_and_recovery(
    portal: PortalProcess,
    api: httpx.Client,
    job: dict[str, object],
    daemon: str,
    bob: tuple[str, int],
) -> None:
    wait_for(lambda: _cluster(portal)["reachable"] is True, 30, "a first good poll")
    refused: str | None = None
    try:
        dev_cluster("stop", daemon)
        if daemon == "sshd":
            refused = _new_connection_refused(portal, bob)
        deadline = time.monotonic() + OUTAGE_SECONDS
        while time.monotonic() < deadline:
            _assert_surfaces_up(portal, api, job["id"])
            time.sleep(1)
        if daemon in POLLER_DEPENDS_ON:
            cluster = _cluster(portal)
            assert cluster["reachable"] is False
            assert cluster["last_error"], "the reason is missing from /healthz"
    finally:
        dev_cluster("up")
    restored = time.monotonic()
    wait_for(lambda: _cluster(portal)["reachable"] is True, 120, "automatic recovery")
    print(f"\n{daemon}: reachable again {time.monotonic() - restored:.1f} s after restart")
    _assert_surfaces_up(portal, api, job["id"])
    if refused is not None:
        wait_for(lambda: _bob_rows_settled(portal, bob, refused), 120, "the refused submit")
