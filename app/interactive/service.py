"""The session use cases both surfaces call: launch, look, end."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

import httpx
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.audit.service import SYSTEM, Origin
from app.db import unit_of_work
from app.errors import Conflict, ValidationFailed
from app.i18n import _
from app.interactive.connection import (
    BadConnection,
    is_ready,
    learn_connection,
    opener_for,
    target_of,
)
from app.interactive.definitions import AppDefinition
from app.interactive.sessions import (
    LaunchForm,
    check_form,
    job_request,
    new_session,
    new_uuid,
    own_session,
    state_of,
)
from app.jobs.service import AdapterLookup, JobService
from app.models.base import utc_now
from app.models.interactive import InteractiveSession
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
    """Look once at each of the actor's starting sessions, then record what was seen: every
    remote look comes before the first change, so no transaction is held during one."""
    starting = [row for row in rows if state_of(row) == "starting" and row.app in definitions]
    seen: list[tuple[InteractiveSession, Seen]] = []
    for row in starting:
        username = actor.username_on(row.job.cluster)
        if username is not None:
            adapter = adapters.get(row.job.cluster)
            found = await look(row, definitions[row.app], adapter, username, client, utc_now())
            if found is not None:
                seen.append((row, found))
    for row, found in seen:
        found.record(row)


async def refresh(
    row: InteractiveSession,
    definition: AppDefinition,
    adapter: SchedulerAdapter,
    username: str,
    client: httpx.AsyncClient,
    now: datetime,
) -> None:
    """One session's ``look``, recorded on its row."""
    found = await look(row, definition, adapter, username, client, now)
    if found is not None:
        found.record(row)


@dataclass(frozen=True, slots=True)
class Seen:
    """Where a starting session's server listens, and since when it answers (if it does)."""

    port: int
    secret: str
    ready_at: datetime | None

    def record(self, row: InteractiveSession) -> None:
        row.port, row.secret, row.ready_at = self.port, self.secret, self.ready_at


async def look(
    row: InteractiveSession,
    definition: AppDefinition,
    adapter: SchedulerAdapter,
    username: str,
    client: httpx.AsyncClient,
    now: datetime,
) -> Seen | None:
    """Once the job runs: where the server listens, then whether it answers; None while
    that is not known yet. Changes nothing.

    Costs one read as the user until the file is there and one HTTP request until the app
    answers; nothing once the session is running or has ended.
    """
    if state_of(row) != "starting":
        return None
    port, secret = row.port, row.secret
    if port is None or secret is None:
        try:
            connection = await learn_connection(row, adapter, username)
        except BadConnection:
            return None
        if connection is None:
            return None
        port, secret = connection.port, connection.secret
    opener = opener_for(adapter, username)
    target = target_of(row, definition, opener, port=port, secret=secret)
    ready = target is not None and await is_ready(target, row, definition, client)
    return Seen(port, secret, now if ready else row.ready_at)


async def end_own(
    sessionmaker: async_sessionmaker[AsyncSession],
    jobs: JobService,
    actor: Actor,
    session_id: int,
    *,
    origin: Origin = SYSTEM,
) -> InteractiveSession:
    """End the actor's own session; its row is read in a short unit of work of its own,
    closed before the cancel goes to the cluster, so the caller holds no connection."""
    async with unit_of_work(sessionmaker) as session:
        row = await own_session(session, actor, session_id)
    await end(jobs, actor, row, origin=origin)
    return row


async def keep(
    session: AsyncSession, actor: Actor, session_id: int, now: datetime
) -> InteractiveSession:
    """ "Keep it": the actor's session starts a new idle spell now, whatever its app last said,
    and any warning of its end is withdrawn."""
    row = await own_session(session, actor, session_id)
    if state_of(row) == "ended" or row.idle_ended_at is not None:
        raise Conflict(_("This session has ended; launch it again to go on."))
    row.kept_at = now
    row.idle_since = row.idle_warned_at = row.idle_ends_at = None
    await session.flush()
    return row


async def end(
    jobs: JobService, actor: Actor, row: InteractiveSession, *, origin: Origin = SYSTEM
) -> None:
    """Cancel the session's job as its owner; a session whose job has ended is already over."""
    try:
        await jobs.cancel(actor, row.job_id, origin=origin)
    except Conflict:
        if state_of(row) != "ended":
            raise
