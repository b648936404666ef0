"""Attack: map a portal user to the cluster's service account (or root, slurm, a system
account) and act through it. The mapping is refused with a 422 naming the field; a mapping
planted in the database before this check existed is refused by the transports, so the
submission gets a clear 403 and no job runs as the service user."""

from __future__ import annotations

import subprocess
import time
import uuid
from collections.abc import Iterator

import httpx
import pytest

from app.scheduler.config import load_clusters
from app.scheduler.errors import PermissionDenied
from app.scheduler.registry import build_adapter
from app.scheduler.types import JobSpec
from tests.portal import CLUSTERS_FILE, PortalProcess
from tests.security.conftest import api_token, project_and_template, run_sql, signed_in, user_id

pytestmark = pytest.mark.slurm


@pytest.mark.parametrize("username", ["hpcsvc", "root", "slurm", "daemon", "munge"])
def test_admin_cannot_map_a_user_to_a_service_or_system_account(
    live_portal: PortalProcess, username: str
) -> None:
    carol = user_id(live_portal, "carol")
    with signed_in(live_portal, "admin") as web:
        answer = web.client.post(
            f"/admin/users/{carol}/clusters",
            data={"csrf_token": web.csrf, "cluster": "testcluster", "username": username},
        )
    assert answer.status_code == 422
    assert f"{username} is a service or system account on testcluster" in answer.text
    mapped = run_sql(
        live_portal,
        "SELECT username FROM user_cluster_accounts "
        "WHERE user_id = :id AND cluster = 'testcluster'",
        id=carol,
    )
    assert mapped == [("carol",)]


@pytest.fixture
def carol_mapped_to_service_user(live_portal: PortalProcess) -> Iterator[None]:
    carol = user_id(live_portal, "carol")
    statement = (
        "UPDATE user_cluster_accounts SET username = :name "
        "WHERE user_id = :id AND cluster = 'testcluster'"
    )
    run_sql(live_portal, statement, name="hpcsvc", id=carol)
    try:
        yield
    finally:
        run_sql(live_portal, statement, name="carol", id=carol)


def _hpcsvc_jobs_named(name: str) -> list[str]:
    out = subprocess.run(
        ["sacct", "-X", "-n", "-P", "-a", "-u", "hpcsvc", "--name", name, "-o", "JobID",
         "-S", "now-1hour"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return out.split()


def test_a_planted_service_user_mapping_cannot_submit(
    live_portal: PortalProcess, carol_mapped_to_service_user: None
) -> None:
    project_id, template_id = project_and_template(live_portal, "physics", "Hello world")
    name = f"svc-{uuid.uuid4().hex[:8]}"
    body = {
        "template_id": template_id,
        "project_id": project_id,
        "parameters": {"message": "as the service", "seconds": 0, "job_name": name},
    }
    headers = {"Authorization": f"Bearer {api_token(live_portal, 'carol')}"}
    with httpx.Client(base_url=live_portal.base_url, headers=headers, timeout=60) as api:
        answer = api.post("/api/v1/jobs", json=body)
    assert answer.status_code == 403, answer.text
    assert "does not act as hpcsvc" in answer.json()["detail"]
    time.sleep(1)
    assert _hpcsvc_jobs_named(name) == []


@pytest.mark.parametrize("transport", ["ssh", "rest"])
async def test_transports_refuse_to_act_for_a_user_as_the_service_account(transport: str) -> None:
    config = load_clusters(CLUSTERS_FILE)["testcluster"]
    adapter = build_adapter(config, transport)  # type: ignore[arg-type]
    spec = JobSpec(script="#!/bin/bash\ntrue\n", name="svc", account="physics")
    try:
        with pytest.raises(PermissionDenied, match="refusing"):
            await adapter.submit(spec, "hpcsvc")
        with pytest.raises(PermissionDenied, match="refusing"):
            await adapter.cancel(["1"], "hpcsvc")
    finally:
        await adapter.close()
