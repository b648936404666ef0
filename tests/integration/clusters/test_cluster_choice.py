"""Pages with two clusters where one Slurm account (physics) is a project on each: the template
form charges the project of the cluster chosen, as the user's username there; the job list
and the dashboard filter by cluster; the script form names each project's cluster."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.job_templates import choices
from app.models.jobs import Job
from app.models.projects import Project
from app.models.users import UserClusterAccount
from app.poller.cycle import poll_cluster_once
from app.scheduler.fake import FakeScheduler
from app.scheduler.registry import SchedulerRegistry
from app.scheduler.types import FileChunk, JobSpec
from tests.factories import DEFAULT_CLUSTER, add_member, make_project
from tests.integration.web.conftest import sign_in
from tests.integration.web.helpers import make_template
from tests.world import World

OTHER = "cluster-b"


class ReaderRecording(FakeScheduler):
    """Remembers as whom each file was read."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.readers: list[str] = []

    async def read_file(self, path: str, offset: int, limit: int, as_user: str) -> FileChunk:
        self.readers.append(as_user)
        return await super().read_file(path, offset, limit, as_user)


@pytest.fixture
def schedulers() -> dict[str, FakeScheduler]:
    choices._cache.clear()
    return {
        DEFAULT_CLUSTER: FakeScheduler(accounts={"alice": ["physics"]}),
        # alice is "asmith" on the second cluster.
        OTHER: ReaderRecording(accounts={"asmith": ["physics"]}, first_job_id=5000),
    }


@pytest.fixture
def registry(schedulers: dict[str, FakeScheduler]) -> SchedulerRegistry:
    return SchedulerRegistry.of(schedulers)


@pytest.fixture
async def physics_b(session: AsyncSession, world: World) -> Project:
    session.add(UserClusterAccount(user_id=world.alice.id, cluster=OTHER, username="asmith"))
    project = await make_project(
        session, "physics (cluster-b)", slurm_account="physics", cluster=OTHER
    )
    await add_member(session, world.alice, project, role="manager")
    await session.commit()
    return project


async def test_the_template_form_submits_to_the_chosen_clusters_project_as_that_clusters_user(
    client: httpx.AsyncClient,
    world: World,
    physics_b: Project,
    sessionmaker: async_sessionmaker[AsyncSession],
    schedulers: dict[str, FakeScheduler],
) -> None:
    template = await make_template(sessionmaker, world.admin, "Both", scope="site")
    csrf = await sign_in(client, "alice")
    form = await client.get(f"/templates/{template.id}/submit?cluster={OTHER}")
    assert f'<option value="{OTHER}" selected>{OTHER}</option>' in form.text
    assert f'name="cluster" value="{OTHER}"' in form.text
    body = {
        "csrf_token": csrf,
        "idempotency_key": "k-b",
        "template_version": "1",
        "cluster": OTHER,
        "job_name": "demo",
        "account": "physics",
        "message": "hi",
        "partition": "debug",
        "time_limit": "0:10:00",
        "output": "~/portal-jobs/%x-%j.out",
    }
    response = await client.post(f"/templates/{template.id}/submit", data=body)
    assert response.status_code == 303, response.text
    async with sessionmaker() as session:
        job = (await session.scalars(select(Job))).one()
    assert (job.cluster, job.project_id, job.slurm_job_id) == (OTHER, physics_b.id, "5000")
    assert schedulers[OTHER].jobs["5000"].user == "asmith"
    assert schedulers[DEFAULT_CLUSTER].jobs == {}

    # Its output is read as asmith, from asmith's home.
    other = schedulers[OTHER]
    assert isinstance(other, ReaderRecording) and job.stdout_path is not None
    assert job.stdout_path.startswith("/home/asmith/")
    other.files[job.stdout_path] = b"hi\n"
    log = await client.get(f"/jobs/{job.id}/logs/stdout")
    assert log.status_code == 200 and other.readers == ["asmith"]

    listed = await client.get(f"/jobs?cluster={OTHER}")
    assert f'<option value="{OTHER}" selected>{OTHER}</option>' in listed.text
    assert f"/jobs/{job.id}" in listed.text
    other_list = await client.get(f"/jobs?cluster={DEFAULT_CLUSTER}")
    assert f'/jobs/{job.id}"' not in other_list.text
    dashboard = await client.get(f"/dashboard?cluster={OTHER}")
    assert f'/jobs/{job.id}"' in dashboard.text
    assert f'hx-get="/dashboard?fragment=jobs&amp;cluster={OTHER}"' in dashboard.text
    elsewhere = await client.get(f"/dashboard?cluster={DEFAULT_CLUSTER}&fragment=jobs")
    assert elsewhere.status_code == 200 and f'/jobs/{job.id}"' not in elsewhere.text


async def test_the_script_form_names_each_projects_cluster(
    client: httpx.AsyncClient, world: World, physics_b: Project
) -> None:
    await sign_in(client, "alice")
    script = await client.get("/submit/script")
    # The account is named only where it is not the project's name.
    assert f">physics ({DEFAULT_CLUSTER})</option>" in script.text
    assert f"physics (cluster-b) (physics, {OTHER})" in script.text


async def test_the_poller_finds_the_jobs_asmith_submitted_outside_the_portal_as_alices(
    client: httpx.AsyncClient,
    world: World,
    physics_b: Project,
    sessionmaker: async_sessionmaker[AsyncSession],
    schedulers: dict[str, FakeScheduler],
) -> None:
    other = schedulers[OTHER]
    spec = JobSpec(script="#!/bin/bash\ntrue\n", name="by-hand", account="physics")
    slurm_id = await other.submit(spec, "asmith")
    await poll_cluster_once(sessionmaker, OTHER, other)
    async with sessionmaker() as session:
        job = (await session.scalars(select(Job).where(Job.slurm_job_id == slurm_id))).one()
    assert (job.cluster, job.owner_user_id, job.project_id) == (OTHER, world.alice.id, physics_b.id)


async def test_the_usage_page_offers_the_clusters_and_keeps_the_choice_in_its_links(
    client: httpx.AsyncClient, world: World, physics_b: Project
) -> None:
    await sign_in(client, "alice")
    page = await client.get(f"/usage?cluster={OTHER}&group_by=cluster")
    assert page.status_code == 200
    assert f'<option value="{OTHER}" selected>{OTHER}</option>' in page.text
    assert '<option value="cluster" selected>cluster</option>' in page.text
    assert f"&cluster={OTHER}&format=csv" in page.text
    unknown = await client.get("/usage?cluster=nowhere")
    # A cluster the portal does not serve means every cluster.
    assert unknown.status_code == 200 and "cluster=nowhere" not in unknown.text
    assert not any(
        f'<option value="{c}" selected>' in unknown.text for c in (OTHER, DEFAULT_CLUSTER)
    )
