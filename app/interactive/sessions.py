"""Interactive sessions: launch an app as a Slurm job, learn where it listens, end it.

A session is a job like any other (it shows in the job list, the poller follows it); the
session row adds what the proxy needs. Only its owner ever reaches a session: not a project
manager, not a site admin, because the app runs as its owner with the owner's files.
"""

from __future__ import annotations

import dataclasses
import re
import uuid as uuids
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import NotFound, ValidationFailed
from app.i18n import _
from app.interactive.definitions import AppDefinition, Number
from app.jobs import event_notes, states
from app.jobs.requests import JobRequest
from app.models.interactive import InteractiveSession
from app.models.jobs import Job, JobEvent
from app.users.actor import Actor
from app.vocabulary.job_states import JobStateName

SessionState = Literal["queued", "starting", "running", "ended"]
BASE_PATH = "/apps/sessions/{uuid}/"
# Module names as Lmod and Environment Modules write them (python/3.11, gcc-12.2.0+cuda).
MODULE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+/-]{0,99}$")
PATH = re.compile(r"^/[^\x00-\x1f]{0,1023}$")


@dataclass(frozen=True, slots=True)
class LaunchForm:
    """What a launch form holds; ``None`` numbers take the definition's defaults."""

    project_id: int
    cores: int | None = None
    memory_gb: int | None = None
    time_minutes: int | None = None
    gpus: int | None = None
    partition: str | None = None
    work_dir: str | None = None
    modules: str = ""
    venv: str = ""

    def with_defaults(self, definition: AppDefinition) -> LaunchForm:
        form = definition.form
        return dataclasses.replace(
            self,
            cores=form.cores.default if self.cores is None else self.cores,
            memory_gb=form.memory_gb.default if self.memory_gb is None else self.memory_gb,
            time_minutes=form.time_minutes.default
            if self.time_minutes is None
            else self.time_minutes,
            gpus=form.gpus.default if self.gpus is None else self.gpus,
            modules=self.modules.strip() or form.modules.default,
            venv=self.venv.strip() or form.venv.default,
        )


def _outside(value: int | None, limits: Number) -> bool:
    return value is not None and not limits.min <= value <= limits.max


def _number_problems(definition: AppDefinition, form: LaunchForm) -> dict[str, str]:
    limits = definition.form
    problems = {}
    if _outside(form.cores, limits.cores):
        span = {"min": limits.cores.min, "max": limits.cores.max}
        problems["cores"] = _("choose %(min)s to %(max)s cores", **span)
    if _outside(form.memory_gb, limits.memory_gb):
        span = {"min": limits.memory_gb.min, "max": limits.memory_gb.max}
        problems["memory_gb"] = _("choose %(min)s to %(max)s GB", **span)
    if _outside(form.time_minutes, limits.time_minutes):
        span = {"min": limits.time_minutes.min, "max": limits.time_minutes.max}
        problems["time_minutes"] = _("choose %(min)s to %(max)s minutes", **span)
    if _outside(form.gpus, limits.gpus):
        span = {"min": limits.gpus.min, "max": limits.gpus.max}
        problems["gpus"] = _("choose %(min)s to %(max)s GPUs", **span)
    return problems


def check_form(definition: AppDefinition, form: LaunchForm) -> None:
    """ValidationFailed naming each field outside what the app allows."""
    problems = _number_problems(definition, form)
    if not all(MODULE.match(word) for word in form.modules.split()):
        problems["modules"] = _(
            "module names only (letters, digits and ._+/-), separated by spaces"
        )
    for field, path in (("venv", form.venv), ("work_dir", form.work_dir or "")):
        if path and not PATH.match(path):
            problems[field] = _(
                "an absolute path on the cluster, e.g. %(example)s",
                example=_("/home/you/envs/lab"),
            )
    if problems:
        raise ValidationFailed(_("Some values are not valid for this app."), fields=problems)


def session_folder(home: str, session_uuid: str) -> str:
    return f"{home.rstrip('/')}/.hpcportal/sessions/{session_uuid}"


def job_request(
    definition: AppDefinition, form: LaunchForm, session_uuid: str, home: str
) -> JobRequest:
    """The job that runs the app: the definition's script as it is, the form in its environment."""
    folder = session_folder(home, session_uuid)
    work_dir = form.work_dir or home
    environment = {
        "PORTAL_APP_BASE_URL": BASE_PATH.format(uuid=session_uuid),
        "PORTAL_APP_CONNECTION": f"{folder}/connection.json",
        "PORTAL_APP_WORK_DIR": work_dir,
        "PORTAL_APP_MODULES": form.modules,
        "PORTAL_APP_VENV": form.venv,
    }
    return JobRequest(
        project_id=form.project_id,
        script=definition.script,
        name=definition.name,  # the app's own name reads the same in every language
        partition=form.partition,
        time_limit_minutes=form.time_minutes,
        nodes=1,
        ntasks=1,
        cpus_per_task=form.cores,
        memory_mb=None if form.memory_gb is None else form.memory_gb * 1024,
        gpus=form.gpus or None,
        work_dir=work_dir,
        stdout_path=f"{folder}/output.log",
        environment=environment,
    )


def new_session(
    actor: Actor, definition: AppDefinition, form: LaunchForm, job: Job, session_uuid: str
) -> InteractiveSession:
    values: dict[str, Any] = {
        key: value for key, value in dataclasses.asdict(form).items() if value not in (None, "")
    }
    return InteractiveSession(
        uuid=session_uuid,
        owner_user_id=actor.user_id,
        job_id=job.id,
        app=definition.name,
        values=values,
    )


def new_uuid() -> str:
    return str(uuids.uuid4())


def state_of(row: InteractiveSession) -> SessionState:
    job_state = row.job.state
    if states.is_terminal(job_state):
        return "ended"
    if job_state != JobStateName.RUNNING:
        return "queued"
    return "running" if row.ready_at is not None else "starting"


async def own_sessions(
    session: AsyncSession, actor: Actor, *, live_only: bool = False
) -> list[InteractiveSession]:
    """The actor's sessions, newest first; ``live_only`` leaves out those whose job ended."""
    query = (
        select(InteractiveSession)
        .where(InteractiveSession.owner_user_id == actor.user_id)
        .order_by(InteractiveSession.id.desc())
    )
    if live_only:
        query = query.join(InteractiveSession.job).where(Job.state.not_in(states.TERMINAL_STATES))
    return list((await session.scalars(query)).unique())


async def own_session(session: AsyncSession, actor: Actor, session_id: int) -> InteractiveSession:
    """The actor's own session; anyone else's (an admin's included) is not found."""
    row = await session.get(InteractiveSession, session_id)
    if row is None or row.owner_user_id != actor.user_id:
        raise NotFound(_("No such session."))
    return row


async def own_session_by_uuid(
    session: AsyncSession, actor: Actor, session_uuid: str
) -> InteractiveSession:
    """The actor's session named in a proxied path; anyone else's is not found."""
    query = select(InteractiveSession).where(
        InteractiveSession.uuid == session_uuid[:36],
        InteractiveSession.owner_user_id == actor.user_id,
    )
    row = (await session.scalars(query)).unique().one_or_none()
    if row is None:
        raise NotFound(_("No such session."))
    return row


def relaunch_form(row: InteractiveSession) -> LaunchForm:
    """The form a session was launched with, for "Relaunch with the same values"."""
    known = {field.name for field in dataclasses.fields(LaunchForm)}
    values: Mapping[str, Any] = {k: v for k, v in row.values.items() if k in known}
    return LaunchForm(**values)


@dataclass(frozen=True, slots=True)
class SessionView:
    """A session as both surfaces show it; the secret is not part of it."""

    id: int
    uuid: str
    app: str
    title: str
    state: SessionState
    job_id: int
    slurm_job_id: str | None
    node: str | None
    created_at: datetime
    started_at: datetime | None
    seconds_left: int | None
    values: Mapping[str, Any]
    end_asked: bool = False
    """Its owner asked to end it: it is ending, or was ended by them (not cancelled)."""
    idle_since: datetime | None = None
    idle_ends_at: datetime | None = None
    """Set while its owner is warned: nobody has used it since, and it will be ended then."""
    ended_idle: bool = False
    """The portal ended it: nobody had used it for the app's idle limit."""
    open_path: str = ""
    """Where Connect opens, under ``connect_path`` (the app definition's ``open_path``)."""
    kind: str = "http"

    @property
    def connect_path(self) -> str | None:
        is_open = self.state == "running" and not (self.end_asked or self.ended_idle)
        return BASE_PATH.format(uuid=self.uuid) if is_open else None

    @property
    def open_url(self) -> str | None:
        return None if self.connect_path is None else self.connect_path + self.open_path

    @property
    def is_ending(self) -> bool:
        return (self.end_asked or self.ended_idle) and self.state != "ended"

    @property
    def is_warned_idle(self) -> bool:
        return self.idle_ends_at is not None and self.state == "running" and not self.end_asked


def seconds_left(row: InteractiveSession, now: datetime) -> int | None:
    job = row.job
    if states.is_terminal(job.state) or job.started_at is None or not job.time_limit_minutes:
        return None
    ends = job.started_at + timedelta(minutes=job.time_limit_minutes)
    return max(0, int((ends - now).total_seconds()))


async def ends_asked(
    session: AsyncSession, actor: Actor, rows: list[InteractiveSession]
) -> set[int]:
    """The job ids of those of ``rows`` the actor has asked to end (their cancel, recorded
    when Slurm accepted it), so a session being ended is never shown as still running."""
    job_ids = [row.job_id for row in rows]
    if not job_ids:
        return set()
    query = select(JobEvent.job_id).where(
        JobEvent.job_id.in_(job_ids),
        JobEvent.source == "user",
        JobEvent.reason == event_notes.requested("cancel", actor.login),
    )
    return set(await session.scalars(query))


def describe(
    row: InteractiveSession,
    definitions: Mapping[str, AppDefinition],
    now: datetime,
    ended_by_owner: set[int] | None = None,
) -> SessionView:
    definition = definitions.get(row.app)
    return SessionView(
        id=row.id,
        uuid=row.uuid,
        app=row.app,
        title=definition.title if definition else row.app,
        state=state_of(row),
        job_id=row.job_id,
        slurm_job_id=row.job.slurm_job_id,
        node=row.job.node_list,
        created_at=row.created_at,
        started_at=row.job.started_at,
        seconds_left=seconds_left(row, now),
        values=dict(row.values),
        end_asked=row.job_id in (ended_by_owner or set()),
        **_idleness(row),
        open_path=definition.open_path if definition else "",
        kind=definition.kind if definition else "http",
    )


def _idleness(row: InteractiveSession) -> dict[str, Any]:
    if row.idle_ended_at is not None:
        return {"ended_idle": True}
    if row.idle_ends_at is None or states.is_terminal(row.job.state):
        return {}
    return {"idle_since": row.idle_since, "idle_ends_at": row.idle_ends_at}
