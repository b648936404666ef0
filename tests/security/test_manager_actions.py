"""Attack: a project manager cancels a colleague's job and Slurm records it as the owner's.

Slurm is now asked as the acting user, so Slurm decides: a manager who is not a Slurm
coordinator of the account gets a clear 403 and the job keeps running; once made a
coordinator, the same manager's cancel works and sacct says who cancelled it; the owner's
own cancel works as before. Checked with sacct on the real cluster.
"""

from __future__ import annotations

import subprocess
import time
import uuid
from collections.abc import Iterator

import httpx
import pytest

from tests.faults.conftest import cancel_slurm_jobs
from tests.portal import PortalProcess, wait_for
from tests.security.conftest import api_token, project_and_template

pytestmark = [pytest.mark.slurm, pytest.mark.slow]


def _uid(user: str) -> str:
    return subprocess.run(["id", "-u", user], capture_output=True, text=True).stdout.strip()


def _sacct_state(slurm_job_id: str) -> str:
    return subprocess.run(
        ["sacct", "-X", "-n", "-P", "-o", "State", "-j", slurm_job_id],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip


@pytest.fixture
def slurm_ids() -> Iterator[list[str]]:
    found: list[str] = []
    yield found
    cancel_slurm_jobs(found)


def _client(portal: PortalProcess, login: str) -> httpx.Client:
    headers = {"Authorization": f"Bearer {api_token(portal, login)}"}
    return httpx.Client(base_url=portal.base_url, headers=headers, timeout=60)


def _carols_sleeping_job(portal: PortalProcess, slurm_ids: list[str]) -> tuple[int, str]:
    project_id, template_id = project_and_template(portal, "physics", "Hello world")
    body = {
        "template_id": template_id,
        "project_id": project_id,
        "parameters": {"message": "x", "seconds": 300, "job_name": f"mgr-{uuid.uuid4().hex[:6]}"},
    }
    with _client(portal, "carol") as carol:
        job = carol.post("/api/v1/jobs", json=body).json()
    slurm_id = str(job["slurm_job_id"])
    slurm_ids.append(slurm_id)
    return int(job["id"]), slurm_id


def _cancelled_by(slurm_id: str, user: str) -> bool:
    return _sacct_state(slurm_id) == f"CANCELLED by {_uid(user)}"


def test_a_manager_who_is_not_a_coordinator_is_refused_by_slurm(
    live_portal: PortalProcess, slurm_ids: list[str]
) -> None:
    job_id, slurm_id = _carols_sleeping_job(live_portal, slurm_ids)
    with _client(live_portal, "alice") as alice:
        answer = alice.post(f"/api/v1/jobs/{job_id}/cancel")
    assert answer.status_code == 403
    assert answer.json()["detail"] == (
        "Slurm refused to let alice cancel this job: only its owner, a coordinator of its "
        "Slurm account or a Slurm operator may."
    )
    time.sleep(2)
    assert not _sacct_state(slurm_id).startswith("CANCELLED")
    with _client(live_portal, "carol") as carol:
        assert carol.post(f"/api/v1/jobs/{job_id}/cancel").status_code == 200
    wait_for(lambda: _cancelled_by(slurm_id, "carol"), 30, "sacct to show carol's cancel")


@pytest.fixture
def alice_coordinates_physics() -> Iterator[None]:
    command = ["sacctmgr", "-i", "{}", "coordinator", "account=physics", "names=alice"]
    subprocess.run([part.format("add") for part in command], check=True, capture_output=True)
    try:
        yield
    finally:
        subprocess.run([part.format("remove") for part in command], capture_output=True)


def test_a_manager_who_coordinates_the_account_cancels_as_themself(
    live_portal: PortalProcess, slurm_ids: list[str], alice_coordinates_physics: None
) -> None:
    job_id, slurm_id = _carols_sleeping_job(live_portal, slurm_ids)
    with _client(live_portal, "alice") as alice:
        assert alice.post(f"/api/v1/jobs/{job_id}/cancel").status_code == 200
    wait_for(lambda: _cancelled_by(slurm_id, "alice"), 30, "sacct to show alice's cancel")
