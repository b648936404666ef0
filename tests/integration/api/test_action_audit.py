"""API actions are audited as "api", or as "cli" when the portal's own client sends them."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.cli.client import USER_AGENT
from app.models.audit import AuditEvent
from app.models.jobs import Job
from app.scheduler.fake import FakeScheduler
from app.scheduler.states import JobState
from tests.integration.api.conftest import issue_token
from tests.world import World

CLIENT_ADDRESS = "127.0.0.1"
SURFACES = pytest.mark.parametrize(
    ("surface", "agent"), [("api", "python-httpx/0"), ("cli", USER_AGENT)], ids=["api", "cli"]
)
TEMPLATE = {"name": "greet", "script": "#!/bin/bash\necho hi\n", "change_note": "first"}


async def only_event(session: AsyncSession, action: str) -> AuditEvent:
    events = list(await session.scalars(select(AuditEvent).where(AuditEvent.action == action)))
    assert len(events) == 1, [e.action for e in events]
    return events[0]


def assert_from(event: AuditEvent, surface: str, user_id: int, target: tuple[str, int]) -> None:
    assert (event.actor_user_id, event.surface, event.address) == (
        user_id,
        surface,
        CLIENT_ADDRESS,
    )
    assert (event.target_type, event.target_id) == (target[0], str(target[1]))
    assert event.at is not None


async def _headers(session: AsyncSession, world: World, agent: str) -> dict[str, str]:
    return {**await issue_token(session, world.carol), "User-Agent": agent}


async def _submit(client: httpx.AsyncClient, world: World, headers: dict[str, str]) -> int:
    body = {"script": "#!/bin/bash\ntrue\n", "name": "audited", "project_id": world.physics.id}
    response = await client.post("/api/v1/jobs", json=body, headers=headers)
    assert response.status_code == 201, response.text
    job_id: int = response.json()["id"]
    return job_id


@SURFACES
async def test_submit_and_resubmit_are_audited(
    client: httpx.AsyncClient, session: AsyncSession, world: World, surface: str, agent: str
) -> None:
    headers = await _headers(session, world, agent)
    job_id = await _submit(client, world, headers)
    again = await client.post(f"/api/v1/jobs/{job_id}/resubmit", json={}, headers=headers)
    assert again.status_code == 201, again.text
    submitted = await only_event(session, "job.submit")
    resubmitted = await only_event(session, "job.resubmit")
    assert_from(submitted, surface, world.carol.id, ("job", job_id))
    assert_from(resubmitted, surface, world.carol.id, ("job", again.json()["id"]))
    assert resubmitted.details["copy_of"] == job_id


@SURFACES
@pytest.mark.parametrize(
    ("action", "scheduler_state"),
    [("cancel", JobState.QUEUED), ("hold", JobState.QUEUED), ("release", JobState.QUEUED_HELD)],
)
async def test_job_actions_are_audited(
    client: httpx.AsyncClient,
    session: AsyncSession,
    world: World,
    scheduler: FakeScheduler,
    surface: str,
    agent: str,
    action: str,
    scheduler_state: JobState,
) -> None:
    headers = await _headers(session, world, agent)
    job_id = await _submit(client, world, headers)
    job = (await client.get(f"/api/v1/jobs/{job_id}", headers=headers)).json()
    scheduler.set_state(job["slurm_job_id"], scheduler_state)
    if action == "release":
        # As the poller records it once Slurm reports the job held.
        await session.execute(update(Job).where(Job.id == job_id).values(state="held"))
        await session.commit()
    response = await client.post(f"/api/v1/jobs/{job_id}/{action}", headers=headers)
    assert response.status_code == 200, response.text
    assert_from(
        await only_event(session, f"job.{action}"), surface, world.carol.id, ("job", job_id)
    )


@SURFACES
async def test_template_create_update_and_clone_are_audited(
    client: httpx.AsyncClient, session: AsyncSession, world: World, surface: str, agent: str
) -> None:
    headers = await _headers(session, world, agent)
    created = await client.post("/api/v1/templates", json=TEMPLATE, headers=headers)
    assert created.status_code == 201, created.text
    template_id = created.json()["id"]
    updated = await client.put(
        f"/api/v1/templates/{template_id}", json={**TEMPLATE, "name": "B"}, headers=headers
    )
    cloned = await client.post(f"/api/v1/templates/{template_id}/clone", headers=headers)
    assert (updated.status_code, cloned.status_code) == (200, 201)
    for action, target_id in [
        ("template.create", template_id),
        ("template.update", template_id),
        ("template.clone", cloned.json()["id"]),
    ]:
        event = await only_event(session, action)
        assert_from(event, surface, world.carol.id, ("job_template", target_id))
