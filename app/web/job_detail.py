"""A job's page and the fragments that refresh it: its status, and an array's task table.

Each fragment is a named block of the page's template; it polls itself while anything in
it can still change and is rendered without ``hx-trigger`` once everything has ended.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response
from sqlalchemy.ext.asyncio import AsyncSession

from app.db import release_connection
from app.deps import FilesServiceDep, RegistryDep, SessionDep, SessionmakerDep
from app.i18n import _
from app.jobs import repository, states, tasks, waiting
from app.jobs import service as jobs
from app.jobs.kept_script import job_script
from app.models.base import utc_now
from app.models.jobs import Job, JobEvent
from app.params import MAX_ID, PathId
from app.users.actor import Actor
from app.web import jobs_fragments as view
from app.web.array_pages import task_context
from app.web.auth import CurrentUser, WebContextDep
from app.web.files import job_file_links
from app.web.job_parameters import schema_of, shown_parameters
from app.web.views import page

POLL_EVERY = "every 3s"
# A job just submitted is asked about every second for its first half minute, when a short
# job changes fastest; the poller looks sooner then too (ADR 0022). Its log panel ending
# (the job has ended and its whole output was sent) asks at once.
POLL_EVERY_AT_FIRST = "every 1s"
FIRST_SECONDS = timedelta(seconds=30)
OUTPUT_ENDED = "job-output-ended from:body"
WAITING_STATES = frozenset({"submitting", *states.QUEUED_STATES})
# An array's tasks change less often than its status line, and the table can be long.
TASKS_POLL_EVERY = "every 5s"

router = APIRouter(include_in_schema=False)


@dataclass(frozen=True, slots=True)
class TasksShown:
    """Which of an array's tasks the page shows: a state filter and the page's start."""

    task_state: str | None
    after: int | None


def tasks_shown(
    task_state: Annotated[str | None, Query(max_length=32)] = None,
    after: Annotated[int | None, Query(ge=0, le=MAX_ID)] = None,
) -> TasksShown:
    return TasksShown(task_state, after)


TasksShownDep = Annotated[TasksShown, Depends(tasks_shown)]


def _streams(job: Job) -> list[tuple[str, str]]:
    """The log panels to show: one when stderr goes to the same file as stdout."""
    if job.stderr_path and job.stderr_path != job.stdout_path:
        return [("stdout", _("Standard output")), ("stderr", _("Standard error"))]
    return [("stdout", _("Output and errors"))]


def poll_trigger(job: Job, now: datetime) -> str:
    """How often a live job's status asks again: sooner while a new job has yet to start
    (once it runs, its log stream's end asks at once when it ends)."""
    is_waiting = job.state in WAITING_STATES
    is_new = now - job.created_at < FIRST_SECONDS
    pace = POLL_EVERY_AT_FIRST if is_new and is_waiting else POLL_EVERY
    return f"{pace}, {OUTPUT_ENDED}"


def status_version(job: Job, events: list[JobEvent], trigger: str) -> str:
    """What the status fragment shows depends on: the row, its history and its pace. A
    poll that already shows this version gets 204 and swaps nothing, so a button is not
    replaced under the reader's pointer every second."""
    last_event = events[-1].id if events else 0
    return f"{job.updated_at.timestamp():.6f}-{last_event}-{trigger.split(',')[0].split()[-1]}"


def _more_label(suggestion: view.Suggestion | None) -> str | None:
    """The label of the button that resubmits with what the job lacked."""
    if suggestion is None:
        return None
    if suggestion.field == "memory_mb":
        return _("Resubmit with more memory")
    return _("Resubmit with more time")


async def detail_context(
    session: AsyncSession, actor: Actor, job_id: PathId, csrf_token: str
) -> dict[str, Any]:
    job = await jobs.get_job(session, actor, job_id)
    events = await repository.list_events_for_job(session, job.id)
    project = await repository.get_project(session, job.project_id)
    badge = view.state_badge(job.state)
    is_array = job.array_spec is not None and job.array_parent_id is None
    return {
        "job": job,
        "project_name": project.name if project else "",
        "badge": badge,
        "timeline": view.timeline(events),
        "usage": view.array_usage(job, await tasks.rollup(session, job))
        if is_array
        else view.usage(job),
        "pending_reason": view.pending_reason(job),
        "stuck": waiting.stuck(job),
        "expected_start": view.expected_start(job),
        "end_explanation": view.cancelled_by(job, events, actor) or view.end_explanation(job),
        "needs_more": _more_label(view.more_resources(job, None)),
        "can_cancel": states.can_cancel(job.state),
        "can_hold": states.can_hold(job.state),
        "can_release": states.can_release(job.state),
        "is_live": not badge.is_terminal,
        "poll_trigger": poll_trigger(job, utc_now()),
        "status_version": status_version(job, events, poll_trigger(job, utc_now())),
        "csrf_token": csrf_token,
        "streams": _streams(job),
        "partition_shown": view.partition_shown(job),
        "retried_slurm_id": await _slurm_id_of(session, job.retry_of_id),
        "array_slurm_id": await _slurm_id_of(session, job.array_parent_id),
        "submitted": view.format_time(job.submitted_at or job.created_at),
        "started": view.format_time(job.started_at),
        "ended": view.format_time(job.ended_at),
    }


async def _slurm_id_of(session: AsyncSession, job_id: int | None) -> str | None:
    """The Slurm id of a related job (an array, a retried array): the id people know."""
    related = await repository.get_by_id(session, job_id) if job_id is not None else None
    return related.slurm_job_id if related else None


@router.get("/jobs/{job_id:int}", name="job_detail")
async def job_detail(
    request: Request,
    session: SessionDep,
    actor: CurrentUser,
    web: WebContextDep,
    job_id: PathId,
    shown: TasksShownDep,
    files: FilesServiceDep,
    registry: RegistryDep,
) -> Response:
    context = await _page_context(session, actor, job_id, web.csrf_token, shown)
    job = context["job"]
    context["partition_label"] = view.partition_label(registry, job.cluster)
    username = await repository.get_cluster_username(session, job.owner_user_id, job.cluster)
    context["file_links"] = job_file_links(files, job, username)
    context["parameters_shown"] = shown_parameters(job, await schema_of(session, job))
    # The reads are done: the page renders without holding a pooled connection, which a
    # live job page asks for every few seconds.
    await release_connection(session)
    return page(request, web, "jobs/detail.html", context)


@router.get("/jobs/{job_id:int}/status", name="job_status")
async def job_status(
    request: Request,
    session: SessionDep,
    actor: CurrentUser,
    web: WebContextDep,
    job_id: PathId,
    registry: RegistryDep,
    seen: Annotated[str | None, Query(max_length=64)] = None,
) -> Response:
    context = await detail_context(session, actor, job_id, web.csrf_token)
    context["partition_label"] = view.partition_label(registry, context["job"].cluster)
    await release_connection(session)
    if seen is not None and seen == context["status_version"]:
        return Response(status_code=204)
    return page(request, web, "jobs/detail.html", context, block="job_status")


async def _page_context(
    session: AsyncSession,
    actor: Actor,
    job_id: int,
    csrf_token: str,
    shown: TasksShown,
) -> dict[str, Any]:
    context = await detail_context(session, actor, job_id, csrf_token)
    job = context["job"]
    context.update(await task_context(session, actor, job, shown.task_state, shown.after))
    context["tasks_poll_trigger"] = TASKS_POLL_EVERY
    return context


@router.get("/jobs/{job_id:int}/tasks-table", name="job_tasks_table")
async def job_tasks_table(
    request: Request,
    session: SessionDep,
    actor: CurrentUser,
    web: WebContextDep,
    job_id: PathId,
    shown: TasksShownDep,
) -> Response:
    context = await _page_context(session, actor, job_id, web.csrf_token, shown)
    return page(request, web, "jobs/detail.html", context, block="job_tasks")


@router.get("/jobs/{job_id:int}/script", name="job_script")
async def job_script_fragment(
    request: Request,
    actor: CurrentUser,
    web: WebContextDep,
    job_id: PathId,
    sessionmaker: SessionmakerDep,
    registry: RegistryDep,
) -> Response:
    """The script of a job submitted outside the portal, asked of Slurm when first shown."""
    found = await job_script(sessionmaker, registry, actor, job_id)
    context = {"script_source": found.source, "script_text": found.text}
    return page(request, web, "jobs/detail.html", context, block="job_script")
