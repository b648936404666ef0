"""An attacker (carol, physics member) tries every id-bearing route with bob's ids.

The routes are enumerated from ``app.routes``, so a new route is attacked without editing
this file. Nothing of bob's may show in any answer and nothing of his may change: his job
row and its history, the in-memory scheduler's copy of his job, his template, his token,
his project's members and his account.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.api.v1.schemas import TemplateIn
from app.models.api_tokens import ApiToken
from app.models.interactive import InteractiveSession, InteractiveSessionViewer
from app.models.job_templates import JobTemplate
from app.models.jobs import Job, JobEvent
from app.models.notifications import NotificationRule
from app.models.projects import Membership
from app.models.users import User
from app.models.workflows import Workflow, WorkflowRun, WorkflowRunJob
from app.scheduler.fake import FakeScheduler
from app.scheduler.registry import SchedulerRegistry
from app.scheduler.types import JobSpec
from app.security import hash_password
from app.tokens import service as tokens
from app.users.service import actor_for
from tests.factories import (
    DEFAULT_CLUSTER,
    add_member,
    fake_registry,
    make_app_session,
    make_job,
    make_project,
    make_template,
    make_user,
)
from tests.integration.web.conftest import sign_in
from tests.security.routes import STATE_CHANGING, RouteInfo, all_routes

SECRET_NAME = "bobs-secret-run-7Q"
SECRET_SCRIPT = "#!/bin/bash\necho BOB-PRIVATE-SCRIPT-9Z\n"
SECRET_TEMPLATE = "bobs-private-template-4K"
SECRET_APP_TOKEN = "bobs-jupyter-secret-Zx81q"
# Route parameters that name no one's data: a cluster or a log stream is shared by all.
# Not another user's record: an upload id is chosen by the uploader and names a part file in
# a folder of their own, reached as them (tests/integration/files cover other users' files).
# An announcement is the whole site's; dismissing one is each reader's own.
SHARED_PARAMETERS = {
    "cluster",
    "stream",
    "action",
    "version",
    "app_name",
    "path",
    "upload_id",
    "announcement_id",
}
ALLOWED = {401, 403, 404, 405, 409}
# Well-formed bodies, so a refusal comes from authorization and not from validation.
API_BODIES: dict[str, dict[str, Any]] = {
    "update_template": TemplateIn.model_config["json_schema_extra"]["examples"][0],  # type: ignore[index]
    "resubmit_job": {},
    "clone_template": {},
    "set_allocation": {"cpu_minutes": 1},
    # The attacker names herself as a viewer of the victim's desktop.
    "add_viewer": {"login": "carol"},
}


@dataclass
class Victim:
    user_id: int
    job_id: int
    slurm_job_id: str
    template_id: int
    project_id: int
    token_id: int
    session_id: int
    session_uuid: str
    rule_id: int
    workflow_id: int
    run_id: int
    viewer_id: int


@pytest.fixture
async def fake() -> FakeScheduler:
    return FakeScheduler(accounts={"bob": ["chemistry"], "carol": ["physics"]})


@pytest.fixture
def registry(fake: FakeScheduler) -> SchedulerRegistry:
    return fake_registry(fake)


async def _victim(session: AsyncSession, fake: FakeScheduler) -> Victim:
    password = hash_password("secret-pass")
    bob = await make_user(session, "bob", cluster_username="bob", password_hash=password)
    chemistry = await make_project(session, "chemistry", slurm_account="chemistry")
    await add_member(session, bob, chemistry, role="manager")
    spec = JobSpec(script=SECRET_SCRIPT, name=SECRET_NAME, account="chemistry")
    slurm_id = await fake.submit(spec, "bob")
    job = await make_job(
        session, bob, chemistry, slurm_job_id=slurm_id, name=SECRET_NAME, script=SECRET_SCRIPT
    )
    template = await make_template(
        session, bob, name=SECRET_TEMPLATE, script=SECRET_SCRIPT, scope="personal"
    )
    created = await tokens.create_token(
        session, await actor_for(session, bob), name="bobs", scopes=["read"], lifetime_days=1
    )
    running = await make_app_session(
        session, bob, chemistry, port=40123, secret=SECRET_APP_TOKEN, node="127.0.0.1"
    )
    rule = NotificationRule(user_id=bob.id, event="ended", job_id=job.id, channel="email")
    step = {"name": "private", "script": SECRET_SCRIPT, "args": [], "after": []}
    workflow = Workflow(
        project_id=chemistry.id, owner_user_id=bob.id, name=SECRET_NAME, steps=[step]
    )
    session.add_all([rule, workflow])
    await session.flush()
    run = WorkflowRun(workflow_id=workflow.id, owner_user_id=bob.id)
    session.add(run)
    await session.flush()
    session.add(WorkflowRunJob(run_id=run.id, step="private", job_id=job.id))
    # Someone bob lets watch his session: nobody else may revoke them or add another.
    dave = await make_user(session, "dave", cluster_username="dave")
    viewer = InteractiveSessionViewer(session_id=running.id, user_id=dave.id)
    session.add(viewer)
    await session.flush()
    await session.commit()
    return Victim(
        bob.id, job.id, slurm_id, template.id, chemistry.id, created.token.id, running.id,
        running.uuid, rule.id, workflow.id, run.id, viewer.id,
    )  # fmt: skip


async def _attacker_token(session: AsyncSession) -> str:
    password = hash_password("secret-pass")
    carol = await make_user(session, "carol", cluster_username="carol", password_hash=password)
    physics = await make_project(session, "physics", slurm_account="physics")
    await add_member(session, carol, physics)
    created = await tokens.create_token(
        session,
        await actor_for(session, carol),
        name="attack",
        scopes=["read", "submit"],
        lifetime_days=1,
    )
    await session.commit()
    return created.secret


def _values(victim: Victim) -> dict[str, str]:
    return {
        "job_id": str(victim.job_id),
        "template_id": str(victim.template_id),
        "project_id": str(victim.project_id),
        "user_id": str(victim.user_id),
        "token_id": str(victim.token_id),
        "version": "1",
        "stream": "stdout",
        "action": "cancel",
        "cluster": DEFAULT_CLUSTER,
        "session_id": str(victim.session_id),
        "session_uuid": victim.session_uuid,
        "rule_id": str(victim.rule_id),
        "workflow_id": str(victim.workflow_id),
        "run_id": str(victim.run_id),
        "viewer_id": str(victim.viewer_id),
        "app_name": "jupyterlab",
        "path": "api/kernels",
        "upload_id": "0" * 32,
    }


def _is_id_bearing(route: RouteInfo) -> bool:
    return bool(set(route.parameters) - SHARED_PARAMETERS)


async def _attack(
    client: httpx.AsyncClient, route: RouteInfo, url: str, token: str, csrf: str
) -> httpx.Response:
    if route.is_api:
        headers = {"Authorization": f"Bearer {token}"}
        body = API_BODIES.get(route.name, {})
        if route.method in STATE_CHANGING:
            return await client.request(route.method, url, headers=headers, json=body)
        return await client.request(route.method, url, headers=headers)
    form = {"csrf_token": csrf, "name": "x", "script": "echo hi", "active": "false"}
    if route.method in STATE_CHANGING:
        return await client.request(route.method, url, data=form)
    return await client.request(route.method, url)


async def _snapshot(sessionmaker: async_sessionmaker[AsyncSession], victim: Victim) -> tuple:
    async with sessionmaker() as session:
        job = await session.get(Job, victim.job_id)
        template = await session.get(JobTemplate, victim.template_id)
        token = await session.get(ApiToken, victim.token_id)
        bob = await session.get(User, victim.user_id)
        running = await session.get(InteractiveSession, victim.session_id)
        rule = await session.get(NotificationRule, victim.rule_id)
        workflow = await session.get(Workflow, victim.workflow_id)
        assert job and template and token and bob and running and rule and workflow
        runs = await session.scalar(
            select(func.count())
            .select_from(WorkflowRunJob)
            .where(WorkflowRunJob.run_id == victim.run_id)
        )
        events = await session.scalar(
            select(func.count()).select_from(JobEvent).where(JobEvent.job_id == job.id)
        )
        viewers = await session.scalar(
            select(func.count())
            .select_from(InteractiveSessionViewer)
            .where(InteractiveSessionViewer.session_id == victim.session_id)
        )
        members = await session.scalar(
            select(func.count())
            .select_from(Membership)
            .where(Membership.project_id == victim.project_id)
        )
        return (
            (job.state, job.name, job.slurm_job_id, events),
            (template.name, template.current_version_id, template.is_archived),
            (token.revoked_at, token.name),
            (bob.is_active, bob.is_site_admin),
            (running.job.state, running.port, running.secret),
            (rule.event, rule.job_id, rule.channel),
            (workflow.name, workflow.is_shared, workflow.steps, runs),
            members,
            viewers,
        )


async def test_no_route_leaks_or_changes_another_users_data(
    app: FastAPI,
    client: httpx.AsyncClient,
    sessionmaker: async_sessionmaker[AsyncSession],
    fake: FakeScheduler,
) -> None:
    async with sessionmaker() as session:
        victim = await _victim(session, fake)
        token = await _attacker_token(session)
    before = await _snapshot(sessionmaker, victim)
    scheduler_before = fake.jobs[victim.slurm_job_id]
    csrf = await sign_in(client, "carol")
    attacked = [route for route in all_routes(app) if _is_id_bearing(route)]
    assert len(attacked) >= 30, "route enumeration found too few id-bearing routes"
    problems = []
    for route in attacked:
        response = await _attack(client, route, route.url(_values(victim)), token, csrf)
        secrets = (SECRET_NAME, SECRET_SCRIPT, SECRET_TEMPLATE, SECRET_APP_TOKEN)
        leaked = any(s in response.text for s in secrets)
        if response.status_code not in ALLOWED or leaked:
            problems.append(f"{route.method} {route.path}: {response.status_code} leaked={leaked}")
    assert problems == [], "\n".join(problems)
    assert await _snapshot(sessionmaker, victim) == before
    assert fake.jobs[victim.slurm_job_id] == scheduler_before
    assert not {"cancel", "hold", "release", "submit"} & set(fake.calls[1:])
