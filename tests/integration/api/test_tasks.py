"""An array job's tasks over the API: paged, filtered by state, and a retry of the failed ones."""

from __future__ import annotations

import httpx
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.models.jobs import Job
from app.models.users import User
from app.scheduler.fake import FakeScheduler
from tests.factories import make_array, make_job
from tests.integration.api.conftest import issue_token
from tests.world import World

FAILED = {3: "failed", 7: "out_of_memory", 12: "timeout"}


async def _array(session: AsyncSession, world: World, owner: User) -> Job:
    states = {index: FAILED.get(index, "completed") for index in range(1, 21)}
    array = await make_array(
        session,
        owner,
        world.physics,
        states,
        name="sweep",
        state="failed",
        slurm_job_id="900",
        array_spec="1-20",
        script="#!/bin/bash\necho $SLURM_ARRAY_TASK_ID\n",
    )
    await session.commit()
    return array


async def test_tasks_come_in_index_order_page_by_page_with_counts(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    array = await _array(session, world, world.carol)
    headers = await issue_token(session, world.carol, ("read",))
    seen: list[int] = []
    url: str | None = f"/api/v1/jobs/{array.id}/tasks?limit=7"
    while url:
        page = (await client.get(url, headers=headers)).json()
        seen += [task["array_task_id"] for task in page["items"]]
        url = page["next"]
    assert seen == list(range(1, 21))
    assert page["counts"] == {"completed": 17, "failed": 1, "out_of_memory": 1, "timeout": 1}
    only = f"/api/v1/jobs/{array.id}/tasks?state=failed&state=timeout"
    failed = (await client.get(only, headers=headers)).json()["items"]
    assert [(t["array_task_id"], t["array_parent_id"]) for t in failed] == [
        (3, array.id),
        (12, array.id),
    ]


async def test_tasks_of_a_job_that_is_no_array_or_with_an_unknown_state_are_refused(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    array = await _array(session, world, world.carol)
    single = await make_job(session, world.carol, world.physics)
    await session.commit()
    headers = await issue_token(session, world.carol, ("read",))
    not_array = await client.get(f"/api/v1/jobs/{single.id}/tasks", headers=headers)
    bad_state = await client.get(f"/api/v1/jobs/{array.id}/tasks?state=done", headers=headers)
    assert (not_array.status_code, not_array.json()["detail"]) == (
        404,
        "This job is not a job array.",
    )
    assert bad_state.status_code == 400


async def test_retry_failed_submits_exactly_those_indices_and_names_the_array(
    client: httpx.AsyncClient, session: AsyncSession, world: World, scheduler: FakeScheduler
) -> None:
    array = await _array(session, world, world.carol)
    headers = await issue_token(session, world.carol)
    response = await client.post(f"/api/v1/jobs/{array.id}/retry-failed", headers=headers)
    assert response.status_code == 201, response.text
    retry = response.json()
    assert (retry["array_spec"], retry["retry_of_id"]) == ("3,7,12", array.id)
    [spec] = scheduler.specs.values()
    assert spec.array == "3,7,12"


async def test_retry_of_an_array_without_failures_is_a_conflict(
    client: httpx.AsyncClient, session: AsyncSession, world: World, scheduler: FakeScheduler
) -> None:
    array = await make_job(session, world.carol, world.physics, state="completed", array_spec="1-2")
    for index in (1, 2):
        await make_job(
            session,
            world.carol,
            world.physics,
            state="completed",
            array_parent_id=array.id,
            array_task_id=index,
        )
    await session.commit()
    headers = await issue_token(session, world.carol)
    response = await client.post(f"/api/v1/jobs/{array.id}/retry-failed", headers=headers)
    assert response.status_code == 409
    assert (
        response.json()["detail"] == "No task of this array failed, so there is nothing to retry."
    )
    assert "submit" not in scheduler.calls


async def test_the_tasks_usage_is_rolled_up_with_cpu_time_from_ended_tasks_only(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    array = await _array(session, world, world.carol)
    for task in await session.scalars(select(Job).where(Job.array_parent_id == array.id)):
        index = task.array_task_id or 0
        task.elapsed_seconds, task.alloc_cpus, task.max_rss_bytes = 10 * index, 2, index * 2**20
        # Task 20 still runs: Slurm reports its CPU time once it has ended.
        task.total_cpu_seconds = None if index == 20 else 10 * index
    await session.commit()
    headers = await issue_token(session, world.carol, ("read",))
    page = await client.get(f"/api/v1/jobs/{array.id}/tasks", headers=headers)
    assert page.json()["usage"] == {
        "longest_task_seconds": 200,
        "ended_tasks_seconds": 1900,
        "cpu_seconds": 1900,
        "cpu_efficiency_percent": 50.0,
        "max_rss_bytes": 20 * 2**20,
        "cpus_per_task": 2,
        "memory_per_task_mb": None,
    }
