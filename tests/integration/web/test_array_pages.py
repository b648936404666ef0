"""An array job's page: its tasks, filtered by state, and a retry of exactly the failed ones."""

from __future__ import annotations

import re

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models.jobs import Job
from app.scheduler.fake import FakeScheduler
from app.scheduler.registry import SchedulerRegistry
from app.scheduler.types import JobSpec
from tests.factories import fake_registry, make_array, make_job
from tests.integration.web.conftest import sign_in
from tests.world import World

Maker = async_sessionmaker[AsyncSession]
FAILED = {3: "failed", 7: "out_of_memory", 12: "timeout"}


@pytest.fixture
def fake() -> FakeScheduler:
    return FakeScheduler(accounts={"alice": ["physics"], "carol": ["physics"]})


@pytest.fixture
def registry(fake: FakeScheduler) -> SchedulerRegistry:
    return fake_registry(fake)


async def _array(sessionmaker: Maker, people: World, owner: str = "alice") -> Job:
    states = {index: FAILED.get(index, "completed") for index in range(1, 21)}
    async with sessionmaker() as session:
        array = await make_array(
            session,
            getattr(people, owner),
            people.physics,
            states,
            name="sweep",
            state="failed",
            slurm_job_id="900",
            array_spec="1-20%4",
            stdout_path="/home/alice/sweep/%A_%a.out",
            script="#!/bin/bash\n#SBATCH --array=1-20%4\necho $SLURM_ARRAY_TASK_ID\n",
        )
        await session.commit()
    return array


async def test_the_array_page_lists_its_tasks_with_counts_and_filters(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker, fake: FakeScheduler
) -> None:
    array = await _array(sessionmaker, people)
    await sign_in(client, "alice")

    page = await client.get(f"/jobs/{array.id}")
    failed = await client.get(f"/jobs/{array.id}", params={"task_state": "failed_any"})

    assert page.status_code == 200
    assert len(re.findall(r'<tr id="task-\d+">', page.text)) == 20
    assert "20 tasks, 3 ended without completing." in page.text
    for label in ("All (20)", "Not completed (3)", "Completed (17)", "Failed (1)"):
        assert label in page.text
    assert re.findall(r'<tr id="task-(\d+)">', failed.text) == ["3", "7", "12"]
    assert "Retry the 3 failed tasks" in page.text
    task = re.search(r'<tr id="task-3">.*?href="/jobs/(\d+)/logs/stdout"', page.text, re.S)
    assert task is not None
    task_page = await client.get(f"/jobs/{task.group(1)}")
    assert f'<a href="/jobs/{array.id}">task 3 of array 900</a>' in task_page.text


async def test_retry_submits_exactly_the_failed_indices_as_a_job_naming_the_array(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker, fake: FakeScheduler
) -> None:
    array = await _array(sessionmaker, people)
    csrf = await sign_in(client, "alice")

    response = await client.post(f"/jobs/{array.id}/retry-failed", data={"csrf_token": csrf})

    assert response.status_code == 303, response.text
    [spec] = fake.specs.values()
    assert spec.array == "3,7,12%4"
    assert spec.script == "#!/bin/bash\n#SBATCH --array=1-20%4\necho $SLURM_ARRAY_TASK_ID\n"
    retry_id = int(response.headers["location"].rsplit("/", 1)[1])
    async with sessionmaker() as session:
        retry = await session.scalar(select(Job).where(Job.id == retry_id))
    assert retry is not None and retry.retry_of_id == array.id
    shown = await client.get(f"/jobs/{retry_id}")
    # The id people know is Slurm's, not the portal's row number.
    assert f'<a href="/jobs/{array.id}">the failed tasks of job 900</a>' in shown.text


async def test_only_the_owner_may_retry_and_only_when_a_task_failed(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker, fake: FakeScheduler
) -> None:
    array = await _array(sessionmaker, people, owner="carol")
    csrf = await sign_in(client, "alice")

    page = await client.get(f"/jobs/{array.id}")
    refused = await client.post(f"/jobs/{array.id}/retry-failed", data={"csrf_token": csrf})

    assert "Retry the" not in page.text
    assert refused.status_code == 403
    assert fake.specs == {}


async def test_a_running_arrays_task_table_refreshes_itself_and_stops_once_it_ended(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker, fake: FakeScheduler
) -> None:
    array = await _array(sessionmaker, people)
    async with sessionmaker() as session:
        row = await session.get(Job, array.id)
        assert row is not None
        row.state = "running"
        await session.commit()
    await sign_in(client, "alice")

    page = await client.get(f"/jobs/{array.id}", params={"task_state": "failed_any"})
    refresh = f'hx-get="/jobs/{array.id}/tasks-table?task_state=failed_any"'
    fragment = await client.get(f"/jobs/{array.id}/tasks-table?task_state=failed_any")
    async with sessionmaker() as session:
        row = await session.get(Job, array.id)
        assert row is not None
        row.state = "failed"
        await session.commit()
    last = await client.get(f"/jobs/{array.id}/tasks-table?task_state=failed_any")

    assert refresh in page.text
    assert fragment.text.lstrip().startswith('<section id="array-tasks"')
    assert "<html" not in fragment.text and refresh in fragment.text
    assert re.findall(r'<tr id="task-(\d+)">', fragment.text) == ["3", "7", "12"]
    assert "hx-get" not in last.text and 'data-polling="off"' in last.text


async def test_the_array_page_shows_what_its_tasks_used_together(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker, fake: FakeScheduler
) -> None:
    array = await _array(sessionmaker, people)
    async with sessionmaker() as session:
        row = await session.get(Job, array.id)
        assert row is not None
        row.time_limit_minutes, row.memory_mb, row.cpus = 10, 1024, 1
        for task in await session.scalars(select(Job).where(Job.array_parent_id == array.id)):
            index = task.array_task_id or 0
            task.elapsed_seconds, task.total_cpu_seconds = 6 * index, 3 * index
            task.max_rss_bytes = 25 * index * 2**20
        await session.commit()
    await sign_in(client, "alice")

    page = await client.get(f"/jobs/{array.id}")

    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.text))
    assert "Time 0:02:00 of 0:10:00 (longest task; 0:21:00 over all ended tasks)" in text
    assert "CPU efficiency 50.0 % of 1 CPU per task" in text
    assert "Memory 500 MB used of 1.0 GB per task (by the task that used the most)" in text


async def test_a_job_submitted_outside_shows_the_script_slurm_keeps(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker, fake: FakeScheduler
) -> None:
    script = "#!/bin/bash\necho '<b>by hand</b>'\n"
    slurm_id = await fake.submit(JobSpec(script=script, account="physics"), "alice")
    async with sessionmaker() as session:
        job = await make_job(
            session, people.alice, people.physics, slurm_job_id=slurm_id, script=""
        )
        job.submitted_outside = True
        await session.commit()
    await sign_in(client, "alice")

    page = await client.get(f"/jobs/{job.id}")
    fragment = await client.get(f"/jobs/{job.id}/script")

    assert f'hx-get="/jobs/{job.id}/script" hx-trigger="load"' in page.text
    assert "this is the script Slurm keeps for it" in fragment.text
    assert "echo &#39;&lt;b&gt;by hand&lt;/b&gt;&#39;" in fragment.text
    assert "<html" not in fragment.text


async def test_an_arrays_output_link_leads_to_its_tasks_outputs_not_to_a_no_value_path(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker, fake: FakeScheduler
) -> None:
    array = await _array(sessionmaker, people)
    await sign_in(client, "alice")

    page = await client.get(f"/jobs/{array.id}")
    own_log = await client.get(f"/jobs/{array.id}/logs/stdout")
    task = re.search(r'<tr id="task-3">.*?href="/jobs/(\d+)/logs/stdout"', page.text, re.S)

    assert "4294967294" not in page.text
    assert '<a href="#array-tasks">Each task&#39;s output</a>' in page.text
    assert own_log.status_code == 404
    assert "each task writes its own file" in own_log.text
    assert task is not None
    log_page = await client.get(f"/jobs/{task.group(1)}/logs/stdout")
    assert 'sweep <span translate="no">(900_3)</span></a> \u203a Standard output' in log_page.text
