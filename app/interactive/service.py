"""The session use cases both surfaces call: launch, look, end."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

import httpx
from sqlalchemy.ext.asyncio import AsyncSession

from app.audit.service import SYSTEM, Origin
from app.db import release_connection
from app.errors import Conflict, ValidationFailed
from app.i18n import _
from app.interactive.connection import BadConnection, is_ready, learn_connection, target_of
from app.interactive.definitions import AppDefinition
from app.interactive.sessions import (
    LaunchForm,
    check_form,
    job_request,
    new_session,
    new_uuid,
    state_of,
)
from app.jobs.service import AdapterLookup, JobService
from app.models import InteractiveSession, utc_now
from app.scheduler.base import SchedulerAdapter
from app.scheduler.config import ClusterConfig
from app.submissions import choices
from app.users.actor import Actor


async def launch(
    session: AsyncSession,
    actor: Actor,
    jobs: JobService,
    definition: AppDefinition,
    form: LaunchForm,
    home: str,
    *,
    origin: Origin = SYSTEM,
) -> InteractiveSession:
    """Submit the app's job as the actor and record the session; the job is a job like any."""
    form = form.with_defaults(definition)
    check_form(definition, form)
    session_uuid = new_uuid()
    request = job_request(definition, form, session_uuid, home)
    await release_connection(session)
    job = await jobs.submit(actor, request, origin=origin)
    row = new_session(actor, definition, form, job, session_uuid)
    session.add(row)
    await session.flush()
    await session.refresh(row, ["job"])
    return row


async def home_for(
    session: AsyncSession,
    actor: Actor,
    project_id: int,
    clusters: Mapping[str, ClusterConfig | None],
    adapters: AdapterLookup,
) -> str:
    """The actor's home on the cluster of one of their projects, where sessions keep files."""
    projects = await choices.actor_projects(session, actor)
    project = next((p for p in projects if p.id == project_id), None)
    if project is None:
        raise ValidationFailed(fields={"project_id": _("choose one of your projects")})
    context = await choices.context_for(session, actor, project, clusters, adapters)
    if context.home is None:
        raise ValidationFailed(
            _(
                "The portal could not find your home folder on cluster %(cluster)s.",
                cluster=project.cluster,
            )
        )
    return context.home


async def refresh_all(
    session: AsyncSession,
    actor: Actor,
    rows: Sequence[InteractiveSession],
    definitions: Mapping[str, AppDefinition],
    adapters: AdapterLookup,
    client: httpx.AsyncClient,
) -> None:
    """Look once at each of the actor's starting sessions; no transaction is held meanwhile."""
    starting = [row for row in rows if state_of(row) == "starting" and row.app in definitions]
    if not starting:
        return
    await release_connection(session)
    for row in starting:
        username = actor.username_on(row.job.cluster)
        if username is not None:
            adapter = adapters.get(row.job.cluster)
            await refresh(row, definitions[row.app], adapter, username, client, utc_now())


async def refresh(
    row: InteractiveSession,
    definition: AppDefinition,
    adapter: SchedulerAdapter,
    username: str,
    client: httpx.AsyncClient,
    now: datetime,
) -> None:
    """Once the job runs: learn where the server listens, then whether it answers.

    Costs one read as the user until the file is there and one HTTP request until the app
    answers; nothing once the session is running or has ended. The caller holds no
    transaction while it runs (``refresh_all`` sees to it).
    """
    if state_of(row) != "starting":
        return
    if row.port is None:
        try:
            connection = await learn_connection(row, adapter, username)
        except BadConnection:
            return
        if connection is None:
            return
        row.port, row.secret = connection.port, connection.secret
    target = target_of(row, definition)
    if target is not None and await is_ready(target, row, definition, client):
        row.ready_at = now


async def end(
    jobs: JobService, actor: Actor, row: InteractiveSession, *, origin: Origin = SYSTEM
) -> None:
    """Cancel the session's job as its owner; a session whose job has ended is already over."""
    try:
        await jobs.cancel(actor, row.job_id, origin=origin)
    except Conflict:
        if state_of(row) != "ended":
            raise
