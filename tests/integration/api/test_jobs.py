from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import httpx
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.models.jobs import Job
from app.scheduler.fake import FakeScheduler
from tests.factories import make_job, make_template
from tests.integration.api.conftest import issue_token
from tests.world import World

SCHEMA = {
    "parameters": [
        {"name": "who", "label": "Who", "type": "text", "default": "world", "required": False}
    ]
}
SCRIPT = "#!/bin/bash\necho hello {{ who }}\n"


async def _template_id(session: AsyncSession, world: World) -> int:
    template = await make_template(
        session, world.carol, script=SCRIPT, parameter_schema=SCHEMA, name="hello"
    )
    await session.commit()
    return template.id


async def test_submit_from_template_records_and_submits_once(
    client: httpx.AsyncClient, session: AsyncSession, world: World, scheduler: FakeScheduler
) -> None:
    headers = await issue_token(session, world.carol)
    template_id = await _template_id(session, world)
    body = {"template_id": template_id, "parameters": {"who": "api"}}
    response = await client.post("/api/v1/jobs", json=body, headers=headers)
    assert response.status_code == 201, response.text
    job = response.json()
    assert job["state"] == "pending"
    assert job["project_id"] == world.physics.id
    assert scheduler.calls.count("submit") == 1


async def test_read_token_cannot_submit(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    headers = await issue_token(session, world.carol, ("read",))
    body = {"script": "#!/bin/bash\ntrue\n", "project_id": world.physics.id}
    response = await client.post("/api/v1/jobs", json=body, headers=headers)
    assert response.status_code == 403
    assert response.json() == {
        "error": "Forbidden",
        "detail": "This token lacks the 'submit' scope.",
    }


async def test_raw_script_submission_for_member(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    headers = await issue_token(session, world.carol)
    body = {"script": "#!/bin/bash\nhostname\n", "name": "where", "project_id": world.physics.id}
    response = await client.post("/api/v1/jobs", json=body, headers=headers)
    assert response.status_code == 201, response.text
    assert response.json()["name"] == "where"


async def test_submit_to_foreign_project_is_404(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    headers = await issue_token(session, world.carol)
    body = {"script": "#!/bin/bash\ntrue\n", "project_id": world.chemistry.id}
    assert (await client.post("/api/v1/jobs", json=body, headers=headers)).status_code == 404


async def test_submit_with_both_template_and_script_is_422(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    headers = await issue_token(session, world.carol)
    body = {"template_id": 1, "script": "#!/bin/bash\n", "project_id": world.physics.id}
    response = await client.post("/api/v1/jobs", json=body, headers=headers)
    assert response.status_code == 422
    assert "template_id" in response.json()["fields"]


async def test_concurrent_retries_with_one_key_make_one_job(
    client: httpx.AsyncClient, session: AsyncSession, world: World, scheduler: FakeScheduler
) -> None:
    headers = {**await issue_token(session, world.carol), "Idempotency-Key": "retry-1"}
    body = {"script": "#!/bin/bash\ntrue\n", "project_id": world.physics.id}
    responses = await asyncio.gather(
        *(client.post("/api/v1/jobs", json=body, headers=headers) for _ in range(10))
    )
    assert {r.status_code for r in responses} == {201}
    assert len({r.json()["id"] for r in responses}) == 1
    assert await session.scalar(select(func.count()).select_from(Job)) == 1
    assert scheduler.calls.count("submit") == 1


async def test_carol_cannot_see_bobs_job_or_its_logs(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    job = await make_job(
        session, world.bob, world.chemistry, slurm_job_id="77", work_dir="/home/bob"
    )
    await session.commit()
    headers = await issue_token(session, world.carol)
    for path in ("", "/events", "/logs/stdout", "/logs/stdout/follow"):
        response = await client.get(f"/api/v1/jobs/{job.id}{path}", headers=headers)
        assert response.status_code == 404, path
        assert response.json()["error"] == "NotFound"


async def test_job_list_pages_with_opaque_cursor(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    made = [await make_job(session, world.carol, world.physics) for _ in range(5)]
    await make_job(session, world.bob, world.chemistry)
    await session.commit()
    headers = await issue_token(session, world.carol)
    seen: list[int] = []
    url: str | None = "/api/v1/jobs?limit=2"
    while url:
        page = (await client.get(url, headers=headers)).json()
        seen += [item["id"] for item in page["items"]]
        url = page["next"]
    assert seen == sorted((job.id for job in made), reverse=True)


async def test_job_list_mine_leaves_out_colleagues_jobs(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    own = await make_job(session, world.carol, world.physics)
    colleague = await make_job(session, world.alice, world.physics)
    await session.commit()
    headers = await issue_token(session, world.carol)
    everything = (await client.get("/api/v1/jobs", headers=headers)).json()["items"]
    mine = (await client.get("/api/v1/jobs?mine=true", headers=headers)).json()["items"]
    assert [job["id"] for job in everything] == [colleague.id, own.id]
    assert [job["id"] for job in mine] == [own.id]


async def test_job_list_takes_the_job_pages_filters_template_dates_and_name_or_slurm_id(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    template = await make_template(session, world.carol, name="trainer")
    january, march = datetime(2026, 1, 5, tzinfo=UTC), datetime(2026, 3, 1, tzinfo=UTC)
    early = await make_job(
        session,
        world.carol,
        world.physics,
        name="train-a",
        created_at=january,
        template_version_id=template.current_version_id,
    )
    late = await make_job(session, world.carol, world.physics, name="train-b", created_at=march)
    array = await make_job(
        session, world.carol, world.physics, name="sweep", slurm_job_id="700", array_spec="1-3"
    )
    task = await make_job(
        session,
        world.carol,
        world.physics,
        name="sweep",
        slurm_job_id="700_2",
        array_parent_id=array.id,
        array_task_id=2,
    )
    await session.commit()
    headers = await issue_token(session, world.carol)

    async def ids(query: str) -> list[int]:
        answer = await client.get(f"/api/v1/jobs?{query}", headers=headers)
        assert answer.status_code == 200, answer.text
        return [job["id"] for job in answer.json()["items"]]

    assert await ids("q=train") == [late.id, early.id]
    assert await ids(f"template_id={template.id}") == [early.id]
    assert await ids("since=2026-02-01&until=2026-03-01&q=train") == [late.id]
    assert await ids("q=700") == [array.id]  # tasks folded into their array
    assert await ids("q=700_2") == [task.id]  # unless one is asked for by its id
    refused = await client.get("/api/v1/jobs?since=0001-01-01", headers=headers)
    assert refused.status_code == 400


async def test_a_pending_job_carries_slurms_expected_start_and_a_running_one_none(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    estimate = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
    pending = await make_job(session, world.carol, world.physics, expected_start_at=estimate)
    running = await make_job(
        session, world.carol, world.physics, state="running", expected_start_at=estimate
    )
    await session.commit()
    headers = await issue_token(session, world.carol)
    shown = [
        (await client.get(f"/api/v1/jobs/{job.id}", headers=headers)).json()["expected_start_at"]
        for job in (pending, running)
    ]
    assert shown == ["2030-01-02T03:04:05Z", None]


async def test_malformed_cursor_is_400(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    headers = await issue_token(session, world.carol)
    response = await client.get("/api/v1/jobs?cursor=%%%", headers=headers)
    assert response.status_code == 400
    assert response.json()["error"] == "BadRequest"


async def test_cancel_of_finished_job_is_conflict(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    job = await make_job(session, world.carol, world.physics, state="completed", slurm_job_id="5")
    await session.commit()
    headers = await issue_token(session, world.carol)
    response = await client.post(f"/api/v1/jobs/{job.id}/cancel", headers=headers)
    assert response.status_code == 409


async def test_hold_and_release_pending_job(
    client: httpx.AsyncClient, session: AsyncSession, world: World, scheduler: FakeScheduler
) -> None:
    headers = await issue_token(session, world.carol)
    body = {"script": "#!/bin/bash\ntrue\n", "project_id": world.physics.id}
    job = (await client.post("/api/v1/jobs", json=body, headers=headers)).json()
    response = await client.post(f"/api/v1/jobs/{job['id']}/hold", headers=headers)
    assert response.status_code == 200, response.text
    assert "hold" in scheduler.calls
    events = (await client.get(f"/api/v1/jobs/{job['id']}/events", headers=headers)).json()
    assert any("hold requested" in (e["reason"] or "") for e in events)


async def test_unreachable_cluster_is_503_on_submit(
    client: httpx.AsyncClient, session: AsyncSession, world: World, scheduler: FakeScheduler
) -> None:
    scheduler.is_up = False
    headers = await issue_token(session, world.carol)
    body = {"script": "#!/bin/bash\ntrue\n", "project_id": world.physics.id}
    response = await client.post("/api/v1/jobs", json=body, headers=headers)
    assert response.status_code == 503
    assert response.json()["error"] == "ServiceUnavailable"


async def test_every_kind_of_job_has_a_submission_time_once_slurm_accepted_it(
    client: httpx.AsyncClient, session: AsyncSession, world: World, scheduler: FakeScheduler
) -> None:
    headers = await issue_token(session, world.carol)
    template_id = await _template_id(session, world)
    script = "#!/bin/bash\n#SBATCH --array=1-3\ntrue\n"
    bodies = {
        "template": {"template_id": template_id},
        "script": {"script": "#!/bin/bash\ntrue\n", "project_id": world.physics.id},
        "array": {"script": script, "project_id": world.physics.id},
    }
    submitted = {}
    for kind, body in bodies.items():
        response = await client.post("/api/v1/jobs", json=body, headers=headers)
        assert response.status_code == 201, response.text
        shown = await client.get(f"/api/v1/jobs/{response.json()['id']}", headers=headers)
        submitted[kind] = (response.json()["submitted_at"], shown.json()["submitted_at"])
    assert all(at is not None for pair in submitted.values() for at in pair), submitted
    assert (await client.get("/api/v1/jobs", headers=headers)).json()["items"][0]["array_spec"]
