"""Dependencies a submitter chooses among their own jobs, turned into the scheduler's ids.

A submission names earlier jobs by their portal ids. Only the submitter's own jobs on the
project's cluster that have reached the scheduler may be named: Slurm would accept another
user's job id, but a dependency on someone else's work is not the submitter's to make.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import ValidationFailed
from app.i18n import _
from app.jobs import repository
from app.models.jobs import Job
from app.models.projects import Project
from app.scheduler.dependencies import Dependency, DependencyKind, dependency_option
from app.users.actor import Actor

MAX_JOBS = 64


@dataclass(frozen=True, slots=True)
class After:
    """Start this job after ``job_ids`` (portal ids) end as ``kind`` asks."""

    kind: DependencyKind
    job_ids: tuple[int, ...] = ()


def _refused(message: str) -> ValidationFailed:
    return ValidationFailed(message, {"dependency": message})


async def _slurm_id(session: AsyncSession, actor: Actor, project: Project, job_id: int) -> str:
    job = await repository.get_by_id(session, job_id)
    if job is None or job.owner_user_id != actor.user_id:
        raise _refused(_("Job %(id)s is not one of your jobs.", id=job_id))
    if job.cluster != project.cluster:
        raise _refused(
            _(
                "Job %(id)s runs on %(other)s; this job goes to %(cluster)s.",
                id=job_id,
                other=job.cluster,
                cluster=project.cluster,
            )
        )
    if job.slurm_job_id is None:
        raise _refused(_("Job %(id)s has not reached the scheduler.", id=job_id))
    return job.slurm_job_id


async def resolve(
    session: AsyncSession, actor: Actor, project: Project, wanted: Sequence[After]
) -> str | None:
    """The ``--dependency`` value for ``wanted``; ValidationFailed naming a job not allowed."""
    if sum(len(after.job_ids) for after in wanted) > MAX_JOBS:
        raise _refused(_("A job can depend on at most %(n)s jobs.", n=MAX_JOBS))
    clauses = []
    for after in wanted:
        if after.kind is not DependencyKind.SINGLETON and not after.job_ids:
            raise _refused(_("Choose the jobs this job waits for."))
        if after.kind is DependencyKind.SINGLETON:
            clauses.append(Dependency(after.kind))
            continue
        ids = [await _slurm_id(session, actor, project, job_id) for job_id in after.job_ids]
        clauses.append(Dependency(after.kind, tuple(dict.fromkeys(ids))))
    return dependency_option(clauses)


async def choosable_jobs(session: AsyncSession, actor: Actor, limit: int = 30) -> list[Job]:
    """The submitter's newest jobs that reached the scheduler: what a form offers to wait for."""
    query = (
        select(Job)
        .where(
            Job.owner_user_id == actor.user_id,
            Job.slurm_job_id.is_not(None),
            Job.array_parent_id.is_(None),
        )
        .order_by(Job.id.desc())
        .limit(limit)
    )
    return list(await session.scalars(query))
