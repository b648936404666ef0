"""An array job's tasks, and a retry of the failed ones; each task's logs are its own job's."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, status

from app.api.v1.deps import OriginDep, Reader, Submitter
from app.api.v1.pagination import decode_cursor, next_page
from app.api.v1.params import PathId
from app.api.v1.routes.jobs import IdempotencyKey, checked_key, job_out, known_states
from app.api.v1.schemas import JobOut, errors
from app.api.v1.task_schemas import TaskPageOut, task_usage_out
from app.deps import JobServiceDep, SessionDep
from app.jobs import tasks
from app.models.jobs import JOB_STATES

router = APIRouter(prefix="/jobs", tags=["jobs"])


@router.get(
    "/{job_id}/tasks",
    response_model=TaskPageOut,
    summary="An array job's tasks",
    responses=errors(400, 404),
)
async def list_job_tasks(
    request: Request,
    session: SessionDep,
    principal: Reader,
    job_id: PathId,
    state: Annotated[list[str] | None, Query(description=f"One of {', '.join(JOB_STATES)}")] = None,
    limit: Annotated[int, Query(ge=1, le=tasks.TASK_PAGE_SIZE)] = 100,
    cursor: Annotated[str | None, Query(max_length=64)] = None,
) -> TaskPageOut:
    found = await tasks.task_page(
        session, principal.actor, job_id, known_states(state), decode_cursor(cursor), limit
    )
    next_cursor, next_url = next_page(request, found.next_after)
    return TaskPageOut(
        items=[job_out(task) for task in found.tasks],
        counts=found.counts,
        usage=task_usage_out(found.rollup),
        next_cursor=next_cursor,
        next=next_url,
    )


@router.post(
    "/{job_id}/retry-failed",
    response_model=JobOut,
    status_code=status.HTTP_201_CREATED,
    summary="Submit an array again with exactly its failed tasks",
    responses=errors(400, 404, 409, 503),
)
async def retry_failed_tasks(
    principal: Submitter,
    service: JobServiceDep,
    origin: OriginDep,
    job_id: PathId,
    idempotency_key: IdempotencyKey = None,
) -> JobOut:
    key = checked_key(idempotency_key)
    job = await service.retry_failed_tasks(principal.actor, job_id, key, origin=origin)
    return job_out(job)
