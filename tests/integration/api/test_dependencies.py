"""Submitting after earlier jobs through the API, and a job whose dependency can never hold."""

from __future__ import annotations

import httpx
from sqlalchemy.ext.asyncio import AsyncSession

from app.models.projects import Project
from app.scheduler.fake import FakeScheduler
from tests.factories import make_job, make_project
from tests.integration.api.conftest import issue_token
from tests.world import World

SCRIPT = "#!/bin/bash\ntrue\n"
FAILS = "#!/bin/bash\nexit 1\n"


async def _submit(
    client: httpx.AsyncClient, headers: dict[str, str], project: Project, **extra: object
) -> httpx.Response:
    body = {"script": SCRIPT, "project_id": project.id} | extra
    return await client.post("/api/v1/jobs", json=body, headers=headers)


async def test_job_waits_for_own_earlier_jobs_with_one_dependency_option(
    client: httpx.AsyncClient, session: AsyncSession, world: World, scheduler: FakeScheduler
) -> None:
    headers = await issue_token(session, world.carol)
    first = (await _submit(client, headers, world.physics)).json()
    second = (await _submit(client, headers, world.physics)).json()
    after = [{"kind": "afterok", "job_ids": [first["id"], second["id"]]}]
    response = await _submit(client, headers, world.physics, depends_on=after)
    assert response.status_code == 201, response.text
    job = response.json()
    expected = f"afterok:{first['slurm_job_id']}:{second['slurm_job_id']}"
    assert job["dependency"] == expected
    assert scheduler.specs[job["slurm_job_id"]].dependency == expected
    assert scheduler.jobs[job["slurm_job_id"]].reason == "Dependency"


async def test_someone_elses_job_cannot_be_waited_for(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    others = await make_job(session, world.alice, world.physics, slurm_job_id="77")
    await session.commit()
    headers = await issue_token(session, world.carol)
    after = [{"kind": "afterany", "job_ids": [others.id]}]
    response = await _submit(client, headers, world.physics, depends_on=after)
    assert response.status_code == 422
    assert response.json()["fields"]["dependency"] == f"Job {others.id} is not one of your jobs."


async def test_a_job_on_another_cluster_cannot_be_waited_for(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    elsewhere = await make_project(session, "Far", slurm_account="physics", cluster="other")
    mine = await make_job(session, world.carol, elsewhere, slurm_job_id="5")
    await session.commit()
    headers = await issue_token(session, world.carol)
    after = [{"kind": "afterok", "job_ids": [mine.id]}]
    response = await _submit(client, headers, world.physics, depends_on=after)
    assert response.status_code == 422
    assert "runs on other" in response.json()["fields"]["dependency"]


async def test_never_satisfied_dependency_is_explained_with_its_choices(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    stuck = await make_job(
        session,
        world.carol,
        world.physics,
        slurm_job_id="12",
        reason="DependencyNeverSatisfied",
        dependency="afterok:11",
    )
    await session.commit()
    headers = await issue_token(session, world.carol, ("read",))
    job = (await client.get(f"/api/v1/jobs/{stuck.id}", headers=headers)).json()
    assert job["waiting_explanation"] == (
        "It was to start only once job 11 completed successfully, and that can no longer "
        "happen, so it will never start and Slurm keeps it waiting until you act. Cancel it, "
        "or resubmit a copy without the dependency."
    )
    assert job["waiting_choices"] == ["cancel", "resubmit_without_dependency"]
    french = {**headers, "Accept-Language": "fr"}
    job = (await client.get(f"/api/v1/jobs/{stuck.id}", headers=french)).json()
    assert job["waiting_explanation"].startswith("Il ne devait démarrer")


async def test_resubmitting_a_waiting_job_leaves_its_dependency_out(
    client: httpx.AsyncClient, session: AsyncSession, world: World, scheduler: FakeScheduler
) -> None:
    headers = await issue_token(session, world.carol)
    first = (await _submit(client, headers, world.physics, script=FAILS)).json()
    after = [{"kind": "afterok", "job_ids": [first["id"]]}]
    waiting = (await _submit(client, headers, world.physics, depends_on=after)).json()
    scheduler.finish(first["slurm_job_id"], exit_code=1)
    assert scheduler.jobs[waiting["slurm_job_id"]].reason == "DependencyNeverSatisfied"
    copy = await client.post(f"/api/v1/jobs/{waiting['id']}/resubmit", headers=headers)
    assert copy.status_code == 201, copy.text
    assert copy.json()["dependency"] is None
    assert scheduler.specs[copy.json()["slurm_job_id"]].dependency is None
