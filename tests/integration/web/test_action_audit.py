"""Every action taken through the pages leaves one audit event: who, what, from where."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.job_templates import choices
from app.models.api_tokens import ApiToken
from app.models.audit import AuditEvent
from app.models.job_templates import JobTemplate
from app.models.jobs import Job
from app.scheduler.fake import FakeScheduler
from app.scheduler.registry import SchedulerRegistry
from app.scheduler.states import JobState
from app.scheduler.types import JobSpec, PartitionInfo
from tests.factories import fake_registry, make_job
from tests.integration.web.conftest import sign_in
from tests.integration.web.helpers import make_template
from tests.integration.web.test_template_pages import editor_form
from tests.world import World

Maker = async_sessionmaker[AsyncSession]
CLIENT_ADDRESS = "127.0.0.1"


@pytest.fixture
def fake() -> FakeScheduler:
    choices._cache.clear()
    debug = PartitionInfo(
        name="debug",
        max_time=timedelta(hours=1),
        default_time=timedelta(minutes=10),
        is_default=True,
        state="up",
        total_nodes=1,
        idle_nodes=1,
        total_cpus=2,
        idle_cpus=2,
    )
    return FakeScheduler(accounts={"alice": ["physics"]}, partitions=[debug])


@pytest.fixture
def registry(fake: FakeScheduler) -> SchedulerRegistry:
    return fake_registry(fake)


async def only_event(sessionmaker: Maker, action: str) -> AuditEvent:
    async with sessionmaker() as session:
        events = list(await session.scalars(select(AuditEvent).where(AuditEvent.action == action)))
    assert len(events) == 1, [e.action for e in events]
    return events[0]


def assert_from_the_pages(event: AuditEvent, user_id: int, target: tuple[str, int]) -> None:
    assert (event.actor_user_id, event.surface, event.address) == (user_id, "web", CLIENT_ADDRESS)
    assert (event.target_type, event.target_id) == (target[0], str(target[1]))
    assert event.at is not None


async def _submitted_job(sessionmaker: Maker, people: World, fake: FakeScheduler) -> Job:
    slurm_id = await fake.submit(JobSpec(script="#!/bin/bash\n", account="physics"), "alice")
    async with sessionmaker() as session:
        job = await make_job(session, people.alice, people.physics, slurm_job_id=slurm_id)
        await session.commit()
    return job


async def test_submit_from_a_template_is_audited(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker, fake: FakeScheduler
) -> None:
    template = await make_template(sessionmaker, people.admin, "Site one", scope="site")
    csrf = await sign_in(client, "alice")
    form = {
        "csrf_token": csrf,
        "idempotency_key": "k-audit",
        "job_name": "demo",
        "account": "physics",
        "message": "hello",
        "partition": "debug",
        "time_limit": "0:10:00",
        "output": "~/portal-jobs/%x-%j.out",
    }
    response = await client.post(f"/templates/{template.id}/submit", data=form)
    assert response.status_code == 303, response.text
    async with sessionmaker() as session:
        job = await session.scalar(select(Job))
    assert job is not None
    event = await only_event(sessionmaker, "job.submit")
    assert_from_the_pages(event, people.alice.id, ("job", job.id))
    assert event.details["uuid"] == job.uuid


async def test_resubmit_is_audited_with_the_original(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker, fake: FakeScheduler
) -> None:
    original = await _submitted_job(sessionmaker, people, fake)
    csrf = await sign_in(client, "alice")
    response = await client.post(
        f"/jobs/{original.id}/resubmit", data={"csrf_token": csrf, "name": "again"}
    )
    assert response.status_code == 303, response.text
    new_id = int(response.headers["location"].rsplit("/", 1)[1])
    event = await only_event(sessionmaker, "job.resubmit")
    assert_from_the_pages(event, people.alice.id, ("job", new_id))
    assert event.details["copy_of"] == original.id


@pytest.mark.parametrize(
    ("action", "scheduler_state", "row_state"),
    [
        ("cancel", JobState.QUEUED, "pending"),
        ("hold", JobState.QUEUED, "pending"),
        ("release", JobState.QUEUED_HELD, "held"),
    ],
)
async def test_job_actions_are_audited(
    client: httpx.AsyncClient,
    people: World,
    sessionmaker: Maker,
    fake: FakeScheduler,
    action: str,
    scheduler_state: JobState,
    row_state: str,
) -> None:
    job = await _submitted_job(sessionmaker, people, fake)
    fake.set_state(job.slurm_job_id or "", scheduler_state)
    async with sessionmaker() as session:
        stored = await session.get(Job, job.id)
        assert stored is not None
        stored.state = row_state
        await session.commit()
    csrf = await sign_in(client, "alice")
    response = await client.post(f"/jobs/{job.id}/{action}", data={"csrf_token": csrf})
    assert response.status_code == 303, response.text
    event = await only_event(sessionmaker, f"job.{action}")
    assert_from_the_pages(event, people.alice.id, ("job", job.id))


async def test_refused_action_leaves_no_audit_event(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker, fake: FakeScheduler
) -> None:
    job = await _submitted_job(sessionmaker, people, fake)
    csrf = await sign_in(client, "carol")
    response = await client.post(f"/jobs/{job.id}/cancel", data={"csrf_token": csrf})
    assert response.status_code == 403
    async with sessionmaker() as session:
        found = await session.scalar(select(AuditEvent).where(AuditEvent.action == "job.cancel"))
    assert found is None


async def test_template_create_update_clone_and_archive_are_audited(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker
) -> None:
    csrf = await sign_in(client, "alice")
    created = await client.post("/templates/new", data=editor_form(csrf))
    assert created.status_code == 303, created.text
    async with sessionmaker() as session:
        template_id = await session.scalar(select(JobTemplate.id))
    assert template_id is not None
    edited = await client.post(f"/templates/{template_id}/edit", data=editor_form(csrf, name="B"))
    cloned = await client.post(f"/templates/{template_id}/clone", data={"csrf_token": csrf})
    archived = await client.post(f"/templates/{template_id}/archive", data={"csrf_token": csrf})
    assert (edited.status_code, cloned.status_code, archived.status_code) == (303, 303, 303)
    copy_id = int(cloned.headers["location"].split("/")[2])
    for action, target_id in [
        ("template.create", template_id),
        ("template.update", template_id),
        ("template.clone", copy_id),
        ("template.archive", template_id),
    ]:
        event = await only_event(sessionmaker, action)
        assert_from_the_pages(event, people.alice.id, ("job_template", target_id))


async def test_token_create_and_revoke_are_audited(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker
) -> None:
    csrf = await sign_in(client, "alice")
    form = {"csrf_token": csrf, "name": "laptop", "scopes": ["read"], "expires_in_days": "30"}
    assert (await client.post("/settings/tokens", data=form)).status_code == 201
    async with sessionmaker() as session:
        token_id = await session.scalar(select(ApiToken.id))
    assert token_id is not None
    revoked = await client.post(f"/settings/tokens/{token_id}/revoke", data={"csrf_token": csrf})
    assert revoked.status_code == 303
    for action in ("token.create", "token.revoke"):
        event = await only_event(sessionmaker, action)
        assert_from_the_pages(event, people.alice.id, ("api_token", token_id))


async def test_sign_out_is_audited(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker
) -> None:
    csrf = await sign_in(client, "alice")
    response = await client.post("/signout", data={"csrf_token": csrf})
    assert response.status_code == 303
    event = await only_event(sessionmaker, "auth.sign_out")
    assert_from_the_pages(event, people.alice.id, ("user", people.alice.id))
