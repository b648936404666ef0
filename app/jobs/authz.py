"""Who may see and who may act on a job.

Seeing: the owner, any member of the job's project, site admins. Acting (cancel, hold,
release): the owner, managers of the job's project, site admins. Someone who may not even
see a job is told it does not exist, so ids cannot be probed.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import Forbidden, NotFound
from app.jobs import repository
from app.models import Job, Membership, User


def can_view(actor: User, job: Job, membership: Membership | None) -> bool:
    return actor.is_site_admin or job.owner_user_id == actor.id or membership is not None


def can_act(actor: User, job: Job, membership: Membership | None) -> bool:
    if actor.is_site_admin or job.owner_user_id == actor.id:
        return True
    return membership is not None and membership.role == "manager"


async def get_visible_job(session: AsyncSession, actor: User, job_id: int) -> Job:
    """The job, or NotFound when it does not exist or the actor may not see it."""
    job = await repository.get_by_id(session, job_id)
    if job is None or not actor.is_active:
        raise NotFound("No such job.")
    membership = await repository.get_membership(session, actor.id, job.project_id)
    if not can_view(actor, job, membership):
        raise NotFound("No such job.")
    return job


async def get_actionable_job(session: AsyncSession, actor: User, job_id: int) -> Job:
    """The job, or NotFound (cannot see it) / Forbidden (can see it, may not act on it)."""
    job = await get_visible_job(session, actor, job_id)
    membership = await repository.get_membership(session, actor.id, job.project_id)
    if not can_act(actor, job, membership):
        raise Forbidden("Only the job's owner or a manager of its project may do that.")
    return job
