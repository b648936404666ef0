from __future__ import annotations

from datetime import date
from typing import Annotated

from fastapi import APIRouter, Header, Query, Request, status

from app.api.v1.allocation_schemas import AllocationCheckOut
from app.api.v1.deps import OriginDep, Reader, Submitter
from app.api.v1.errors import BadRequest
from app.api.v1.pagination import decode_cursor, next_page
from app.api.v1.params import PathId
from app.api.v1.schemas import JobEventOut, JobOut, JobPageOut, ResubmitIn, SubmitIn, errors
from app.api.v1.submissions import submission_from
from app.deps import JobServiceDep, SessionDep, SubmitChoicesDep
from app.jobs import listing
from app.jobs import service as jobs
from app.jobs.end_causes import ending
from app.jobs.listing import ListQuery
from app.jobs.states import QUEUED_STATES, is_terminal
from app.jobs.waiting import stuck
from app.models.base import utc_now
from app.models.jobs import JOB_STATES, Job
from app.projects import service as projects
from app.reports.allocation import allocation_warning, requested_minutes
from app.submissions.service import build_request
from app.vocabulary.days import is_plausible_day

router = APIRouter(prefix="/jobs", tags=["jobs"])
MAX_KEY_LENGTH = 128
IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        description="Retrying with the same key returns the same job and never submits twice.",
    ),
]


def job_out(job: Job) -> JobOut:
    ended = ending(job)
    blocked = stuck(job)
    return JobOut(
        id=job.id,
        uuid=job.uuid,
        name=job.name,
        state=job.state,
        is_finished=is_terminal(job.state),
        cluster=job.cluster,
        project_id=job.project_id,
        owner_user_id=job.owner_user_id,
        slurm_job_id=job.slurm_job_id,
        exit_code=job.exit_code,
        reason=job.reason,
        partition=job.partition,
        chosen_partition=job.chosen_partition,
        node_list=job.node_list,
        template_version_id=job.template_version_id,
        parameters=dict(job.parameters or {}),
        submitted_at=job.submitted_at,
        started_at=job.started_at,
        expected_start_at=job.expected_start_at if job.state in QUEUED_STATES else None,
        ended_at=job.ended_at,
        submit_error=job.submit_error,
        exit_signal=job.exit_signal,
        end_cause=ended.cause if ended else None,
        end_explanation=ended.explanation if ended else None,
        time_limit_minutes=job.time_limit_minutes,
        array_spec=job.array_spec,
        array_parent_id=job.array_parent_id,
        array_task_id=job.array_task_id,
        retry_of_id=job.retry_of_id,
        submitted_outside=job.submitted_outside,
        dependency=job.dependency,
        waiting_explanation=blocked.explanation if blocked else None,
        waiting_choices=[choice.value for choice in blocked.choices] if blocked else [],
    )


def known_states(states: list[str] | None) -> tuple[str, ...]:
    """The ``state`` filter as given; 400 naming any state the portal does not have."""
    unknown = sorted(set(states or ()) - set(JOB_STATES))
    if unknown:
        raise BadRequest(f"Unknown state: {', '.join(unknown)}.")
    return tuple(states or ())


def checked_key(key: str | None) -> str | None:
    if key is not None and not 1 <= len(key) <= MAX_KEY_LENGTH:
        raise BadRequest(f"Idempotency-Key must be 1 to {MAX_KEY_LENGTH} characters.")
    return key


@router.post(
    "",
    response_model=JobOut,
    status_code=status.HTTP_201_CREATED,
    summary="Submit a job from a template or a raw script",
    responses=errors(400, 404, 409, 503),
)
async def submit_job(
    session: SessionDep,
    principal: Submitter,
    service: JobServiceDep,
    choices: SubmitChoicesDep,
    origin: OriginDep,
    body: SubmitIn,
    idempotency_key: IdempotencyKey = None,
) -> JobOut:
    key = checked_key(idempotency_key)
    job_request = await build_request(
        session,
        principal.actor,
        submission_from(body),
        lambda project: choices.context_for(session, principal.actor, project),
    )
    return job_out(await service.submit(principal.actor, job_request, key, origin=origin))


@router.post(
    "/allocation-check",
    response_model=AllocationCheckOut,
    summary="Whether a submission fits what is left of its project's allocation (nothing sent)",
    responses=errors(404, 422),
)
async def check_allocation(
    session: SessionDep,
    choices: SubmitChoicesDep,
    service: JobServiceDep,
    principal: Submitter,
    body: SubmitIn,
) -> AllocationCheckOut:
    actor = principal.actor
    job_request = await build_request(
        session,
        actor,
        submission_from(body),
        lambda project: choices.context_for(session, actor, project),
    )
    await service.validate(actor, job_request)
    project = await projects.get(session, actor, job_request.project_id)
    warning = await allocation_warning(session, project.project, job_request, utc_now().date())
    return AllocationCheckOut(
        fits=warning is None,
        requested_cpu_minutes=requested_minutes(job_request),
        warning=warning,
    )


@router.get(
    "", response_model=JobPageOut, summary="Jobs you can see, newest first", responses=errors(400)
)
async def list_jobs(
    request: Request,
    session: SessionDep,
    principal: Reader,
    state: Annotated[list[str] | None, Query(description=f"One of {', '.join(JOB_STATES)}")] = None,
    project_id: PathId | None = None,
    cluster: Annotated[str | None, Query(max_length=64)] = None,
    template_id: PathId | None = None,
    since: Annotated[date | None, Query(description="Submitted on or after this day")] = None,
    until: Annotated[date | None, Query(description="Submitted on or before this day")] = None,
    q: Annotated[
        str | None, Query(max_length=200, description="Name contains, or Slurm id (169, 169_2)")
    ] = None,
    mine: Annotated[bool, Query(description="Only your own jobs, not your projects'")] = False,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=64)] = None,
) -> JobPageOut:
    for day, name in ((since, "since"), (until, "until")):
        if day is not None and not is_plausible_day(day):
            raise BadRequest(f"{name} is not a plausible day.")
    query = ListQuery(
        states=known_states(state),
        project_id=project_id,
        cluster=cluster,
        template_id=template_id,
        since=since,
        until=until,
        text=q or "",
        mine_only=mine,
    )
    rows, after = await listing.list_page(
        session, principal.actor, query, decode_cursor(cursor), limit
    )
    next_cursor, next_url = next_page(request, after)
    return JobPageOut(
        items=[job_out(row.job) for row in rows], next_cursor=next_cursor, next=next_url
    )


@router.get("/{job_id}", response_model=JobOut, summary="One job", responses=errors(404))
async def get_job(session: SessionDep, principal: Reader, job_id: PathId) -> JobOut:
    return job_out(await jobs.get_job(session, principal.actor, job_id))


@router.get(
    "/{job_id}/events",
    response_model=list[JobEventOut],
    summary="State history",
    responses=errors(404),
)
async def list_job_events(
    session: SessionDep, principal: Reader, job_id: PathId
) -> list[JobEventOut]:
    events = await jobs.list_events(session, principal.actor, job_id)
    return [
        JobEventOut(
            at=e.at, from_state=e.from_state, to_state=e.to_state, reason=e.reason, source=e.source
        )
        for e in events
    ]


@router.post(
    "/{job_id}/cancel",
    response_model=JobOut,
    summary="Ask Slurm to cancel",
    responses=errors(404, 409, 503),
)
async def cancel_job(
    principal: Submitter, service: JobServiceDep, origin: OriginDep, job_id: PathId
) -> JobOut:
    return job_out(await service.cancel(principal.actor, job_id, origin=origin))


@router.post(
    "/{job_id}/hold",
    response_model=JobOut,
    summary="Keep a pending job from starting",
    responses=errors(404, 409, 503),
)
async def hold_job(
    principal: Submitter, service: JobServiceDep, origin: OriginDep, job_id: PathId
) -> JobOut:
    return job_out(await service.hold(principal.actor, job_id, origin=origin))


@router.post(
    "/{job_id}/release",
    response_model=JobOut,
    summary="Let a held job start",
    responses=errors(404, 409, 503),
)
async def release_job(
    principal: Submitter, service: JobServiceDep, origin: OriginDep, job_id: PathId
) -> JobOut:
    return job_out(await service.release(principal.actor, job_id, origin=origin))


@router.post(
    "/{job_id}/resubmit",
    response_model=JobOut,
    status_code=status.HTTP_201_CREATED,
    summary="Submit a copy, optionally with other resources",
    responses=errors(400, 404, 409, 503),
)
async def resubmit_job(
    principal: Submitter,
    service: JobServiceDep,
    origin: OriginDep,
    job_id: PathId,
    body: ResubmitIn | None = None,
    idempotency_key: IdempotencyKey = None,
) -> JobOut:
    edits = body.model_dump(exclude_none=True) if body else {}
    key = checked_key(idempotency_key)
    job = await service.resubmit(principal.actor, job_id, edits, key, origin=origin)
    return job_out(job)
