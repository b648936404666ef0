"""Two-phase, crash-safe submission (ADR 0002).

(a) the job row is written and committed in state ``submitting`` with a fresh UUID;
(b) the adapter submits with that UUID in the job's comment, with no transaction open;
(c) the Slurm id is recorded in a second short transaction with a job event.
A crash or a lost answer between (a) and (c) leaves a ``submitting`` row that the poller
later attaches to the Slurm job carrying its UUID, or marks ``submit_failed``. Each phase
opens its own session from the sessionmaker, which is why this is not a request-session
service.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.audit.service import Origin, record_action
from app.db import unit_of_work
from app.errors import NotFound, ValidationFailed
from app.jobs import dependencies, event_notes, repository
from app.jobs.job_fields import spec_values, stored_values
from app.jobs.requests import JobRequest
from app.models.jobs import Job
from app.models.projects import Project
from app.scheduler.errors import InvalidSpec, PreflightFailed
from app.scheduler.log_paths import check_expanded_paths
from app.scheduler.types import JobSpec
from app.scheduler.validation import validate_spec
from app.users.actor import Actor
from app.vocabulary.job_states import JobStateName

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SubmissionPlan:
    """Everything phase (a) and (b) need, gathered in one read-only session."""

    project: Project
    username: str
    spec: JobSpec
    job_uuid: str


def build_spec(
    request: JobRequest, project: Project, job_uuid: str, dependency: str | None = None
) -> JobSpec:
    return JobSpec(
        account=project.slurm_account,
        comment=job_uuid,
        dependency=dependency,
        **spec_values(request),
    )


def new_job_row(plan: SubmissionPlan, owner: Actor, request: JobRequest, key: str | None) -> Job:
    return Job(
        uuid=plan.job_uuid,
        owner_user_id=owner.user_id,
        project_id=plan.project.id,
        cluster=plan.project.cluster,
        idempotency_key=key,
        state=JobStateName.SUBMITTING,
        dependency=plan.spec.dependency,
        **stored_values(request),
    )


async def plan_submission(
    session: AsyncSession, actor: Actor, request: JobRequest, log_roots: tuple[str, ...]
) -> SubmissionPlan:
    """Check the actor may submit to the project and the values are well-formed."""
    project = await repository.get_project(session, request.project_id)
    if project is None or not actor.is_member_of(project.id):
        raise NotFound("No such project, or you are not a member of it.")
    if not project.is_active:
        raise ValidationFailed("This project is closed.", {"project_id": "project is closed"})
    username = await repository.get_cluster_username(session, actor.user_id, project.cluster)
    if username is None:
        raise ValidationFailed(
            f"You have no account on cluster {project.cluster}.",
            {"project_id": f"no user account on {project.cluster}"},
        )
    job_uuid = str(uuid.uuid4())
    dependency = await dependencies.resolve(session, actor, project, request.after)
    spec = build_spec(request, project, job_uuid, dependency)
    try:
        validate_spec(spec, log_roots)
        check_expanded_paths(spec, username, log_roots)
    except InvalidSpec as error:
        raise ValidationFailed(str(error), {error.field: error.message}) from error
    return SubmissionPlan(project, username, spec, job_uuid)


def preflight_failure(error: PreflightFailed) -> ValidationFailed:
    fields: dict[str, str] = {}
    for name, message in error.problems:  # a script may have several lines to change
        fields[name] = f"{fields[name]}; {message}" if name in fields else message
    return ValidationFailed("The cluster would refuse this job: " + str(error), fields, error.raw)


@dataclass(frozen=True, slots=True)
class AuditNote:
    """The audit event phase (a) writes with the row: the action, where from, and details."""

    action: str
    origin: Origin
    details: Mapping[str, Any] = field(default_factory=dict)


async def insert_submitting_row(
    sessionmaker: async_sessionmaker[AsyncSession],
    row: Job,
    note: AuditNote,
    warnings: Sequence[str] = (),
) -> tuple[Job, bool]:
    """Phase (a). Returns (row, is_new); a concurrent retry with the same key gets the winner's.

    The audit event commits with the row, so a submission is audited exactly when it exists.
    """
    try:
        async with unit_of_work(sessionmaker) as session:
            session.add(row)
            await session.flush()
            repository.add_event(
                session,
                row.id,
                None,
                JobStateName.SUBMITTING,
                reason=event_notes.SUBMISSION_STARTED,
                source="submit",
            )
            for warning in warnings:
                repository.add_event(
                    session,
                    row.id,
                    JobStateName.SUBMITTING,
                    JobStateName.SUBMITTING,
                    reason=f"{event_notes.WARNING_PREFIX}{warning}"[:255],
                    source="submit",
                )
            await record_action(
                session,
                row.owner_user_id,
                note.origin,
                note.action,
                ("job", row.id),
                uuid=row.uuid,
                project_id=row.project_id,
                **note.details,
            )
    except IntegrityError:
        if row.idempotency_key is None:
            raise
        async with sessionmaker() as session:
            existing = await repository.get_by_idempotency_key(
                session, row.owner_user_id, row.idempotency_key
            )
        if existing is None:
            raise
        return existing, False
    return row, True


async def record_rejection(
    sessionmaker: async_sessionmaker[AsyncSession], job_id: int, message: str
) -> None:
    """The row of a submission the cluster refused becomes ``submit_failed``.

    It gives up its idempotency key: the corrected request, sent again from the same form or
    with the same key, is a new submission rather than this refused one.
    """
    async with unit_of_work(sessionmaker) as session:
        job = await repository.get_by_id(session, job_id)
        if job is None or job.state != JobStateName.SUBMITTING:
            return
        job.state = JobStateName.SUBMIT_FAILED
        job.submit_error = message
        job.idempotency_key = None
        repository.add_event(
            session,
            job.id,
            JobStateName.SUBMITTING,
            JobStateName.SUBMIT_FAILED,
            reason=message,
            source="submit",
        )


async def record_submission(
    sessionmaker: async_sessionmaker[AsyncSession], job_id: int, slurm_job_id: str
) -> Job | None:
    """Phase (c): attach the Slurm id, unless the poller already did; returns the row as saved."""
    async with unit_of_work(sessionmaker) as session:
        job = await repository.get_by_id(session, job_id)
        if job is None:
            return None
        replaced = job.state
        if not await repository.attach_slurm_id(session, job, slurm_job_id, JobStateName.PENDING):
            await session.refresh(job)  # the poller attached it first: its version
            return job
        repository.add_event(
            session,
            job_id,
            replaced,
            JobStateName.PENDING,
            reason=event_notes.submitted_as(slurm_job_id),
            source="submit",
        )
        return job
