"""Workflows through the API on the in-memory scheduler: run, a failed middle step, re-run."""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.poller.cycle import poll_cluster_once
from app.scheduler.fake import FakeScheduler
from tests.factories import DEFAULT_CLUSTER
from tests.integration.api.conftest import issue_token
from tests.world import World


def three_steps(project_id: int, shared: bool = False) -> dict[str, Any]:
    script = "#!/bin/bash\ntrue\n"
    return {
        "project_id": project_id,
        "name": "chain",
        "is_shared": shared,
        "steps": [
            {"name": "prepare", "script": script},
            {"name": "compute", "script": script, "after": ["prepare"]},
            {"name": "report", "script": script, "after": ["compute"], "kind": "afterany"},
        ],
    }


async def _run(client: httpx.AsyncClient, headers: dict[str, str], body: dict[str, Any]) -> Any:
    created = await client.post("/api/v1/workflows", json=body, headers=headers)
    assert created.status_code == 201, created.text
    run = await client.post(f"/api/v1/workflows/{created.json()['id']}/runs", headers=headers)
    assert run.status_code == 201, run.text
    return run.json()


async def test_steps_are_submitted_in_order_each_waiting_for_the_one_before(
    client: httpx.AsyncClient, session: AsyncSession, world: World, scheduler: FakeScheduler
) -> None:
    headers = await issue_token(session, world.carol)
    run = await _run(client, headers, three_steps(world.physics.id))
    prepare, compute, report = run["steps"]
    assert [s["level"] for s in run["steps"]] == [0, 1, 2]
    assert scheduler.specs[prepare["slurm_job_id"]].dependency is None
    assert scheduler.specs[compute["slurm_job_id"]].dependency == (
        f"afterok:{prepare['slurm_job_id']}"
    )
    assert scheduler.specs[report["slurm_job_id"]].dependency == (
        f"afterany:{compute['slurm_job_id']}"
    )


async def test_rerun_submits_the_failed_step_and_those_after_it_only(
    client: httpx.AsyncClient,
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    world: World,
    scheduler: FakeScheduler,
) -> None:
    headers = await issue_token(session, world.carol)
    body = three_steps(world.physics.id)
    body["steps"][2]["kind"] = "afterok"
    run = await _run(client, headers, body)
    prepare, compute, report = (s["slurm_job_id"] for s in run["steps"])
    scheduler.finish(prepare)
    scheduler.finish(compute, exit_code=1)
    assert scheduler.jobs[report].reason == "DependencyNeverSatisfied"
    await poll_cluster_once(sessionmaker, DEFAULT_CLUSTER, scheduler)
    again = await client.post(f"/api/v1/workflows/runs/{run['id']}/rerun", headers=headers)
    assert again.status_code == 200, again.text
    steps = {s["name"]: s for s in again.json()["steps"]}
    assert steps["prepare"]["slurm_job_id"] == prepare and steps["prepare"]["attempts"] == 1
    assert [steps[n]["attempts"] for n in ("compute", "report")] == [2, 2]
    new_compute = steps["compute"]["slurm_job_id"]
    assert scheduler.specs[new_compute].dependency is None  # prepare succeeded: not waited for
    assert scheduler.specs[steps["report"]["slurm_job_id"]].dependency == f"afterok:{new_compute}"
    assert scheduler.jobs[report].state.value == "cancelled"


async def test_shared_workflow_is_seen_by_project_members_only(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    carol = await issue_token(session, world.carol)
    created = await client.post(
        "/api/v1/workflows", json=three_steps(world.physics.id, shared=True), headers=carol
    )
    wid = created.json()["id"]
    alice = await issue_token(session, world.alice)
    bob = await issue_token(session, world.bob)
    assert (await client.get(f"/api/v1/workflows/{wid}", headers=alice)).status_code == 200
    assert (await client.get(f"/api/v1/workflows/{wid}", headers=bob)).status_code == 404


async def test_steps_waiting_for_each_other_are_refused(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    headers = await issue_token(session, world.carol)
    body = three_steps(world.physics.id)
    body["steps"][0]["after"] = ["report"]
    response = await client.post("/api/v1/workflows", json=body, headers=headers)
    assert response.status_code == 422
    assert response.json()["detail"] == (
        "These steps wait for each other: prepare, compute, report."
    )
