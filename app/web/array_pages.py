"""An array job's page: its tasks in a table with their state, exit code and logs, filtered by
state, and "Retry failed tasks", which submits exactly the failed indices again."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from fastapi import Request
from fastapi.responses import Response
from sqlalchemy.ext.asyncio import AsyncSession

from app.deps import JobServiceDep
from app.jobs import tasks
from app.jobs.end_causes import format_seconds
from app.models.jobs import JOB_STATES, Job
from app.params import PathId
from app.users.actor import Actor
from app.web import jobs_fragments as view
from app.web.auth import CurrentUser, csrf_protected_router, web_origin
from app.web.views import redirect

router = csrf_protected_router()
FAILED = "failed_any"
"""The task filter for every way of ending without completing."""


@dataclass(frozen=True, slots=True)
class TaskRow:
    id: int
    index: int | None
    badge: view.StateBadge
    exit_code: str
    elapsed: str
    has_separate_errors: bool


def _row(task: Job) -> TaskRow:
    return TaskRow(
        id=task.id,
        index=task.array_task_id,
        badge=view.task_state_badge(task.state),
        exit_code="—" if task.exit_code is None else str(task.exit_code),
        elapsed=format_seconds(task.elapsed_seconds),
        has_separate_errors=bool(task.stderr_path and task.stderr_path != task.stdout_path),
    )


def _wanted(task_state: str | None) -> tuple[str, ...]:
    if task_state == FAILED:
        return tuple(sorted(tasks.RETRIED_STATES))
    return (task_state,) if task_state in JOB_STATES else ()


def _counts(counts: dict[str, int]) -> list[tuple[str, str, int]]:
    """(state, label, count) in the order states are listed, for the filter links."""
    return [(s, view.task_state_badge(s).label, counts[s]) for s in JOB_STATES if counts.get(s)]


async def task_context(
    session: AsyncSession, actor: Actor, job: Job, task_state: str | None, after: int | None
) -> dict[str, Any]:
    """What the job page shows of an array's tasks; nothing for a job that is not one."""
    if job.array_spec is None or job.array_parent_id is not None:
        return {}
    found = await tasks.task_page(session, actor, job.id, _wanted(task_state), after)
    failed = sum(n for s, n in found.counts.items() if s in tasks.RETRIED_STATES)
    shown = {"task_state": task_state if _wanted(task_state) else None, "after": after}
    query = urlencode({key: value for key, value in shown.items() if value is not None})
    return {
        "task_query": f"?{query}" if query else "",
        "task_rows": [_row(task) for task in found.tasks],
        "task_counts": _counts(found.counts),
        "task_total": found.total,
        "task_failed": failed,
        "task_state": task_state if _wanted(task_state) else None,
        "task_next_after": found.next_after,
        "can_retry_failed": failed > 0 and job.owner_user_id == actor.user_id,
        "failed_filter": FAILED,
    }


@router.post("/jobs/{job_id:int}/retry-failed", name="job_retry_failed")
async def retry_failed(
    request: Request, service: JobServiceDep, actor: CurrentUser, job_id: PathId
) -> Response:
    retry = await service.retry_failed_tasks(actor, job_id, origin=web_origin(request))
    return redirect(request, f"/jobs/{retry.id}")
