"""Who may see and who may act on a job.

Seeing: the owner, any member of the job's project, site admins. Acting (cancel, hold,
release): the owner, managers of the job's project, site admins. Someone who may not even
see a job is told it does not exist, so ids cannot be probed.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import Forbidden, NotFound
from app.i18n import _
from app.jobs import repository
from app.models.jobs import Job
from app.users.actor import Actor


def can_view(actor: Actor, job: Job) -> bool:
    if actor.is_site_admin or job.owner_user_id == actor.user_id:
        return True
    return actor.is_member_of(job.project_id)


def can_act(actor: Actor, job: Job) -> bool:
    if actor.is_site_admin or job.owner_user_id == actor.user_id:
        return True
    return actor.is_manager_of(job.project_id)


async def get_visible_job(session: AsyncSession, actor: Actor, job_id: int) -> Job:
    """The job, or NotFound when it does not exist or the actor may not see it.

    Project roles come from the actor, which is built from the database per request, and
    only for active users.
    """
    job = await repository.get_by_id(session, job_id)
    if job is None or not can_view(actor, job):
        raise NotFound(_("No such job."))
    return job


async def get_actionable_job(session: AsyncSession, actor: Actor, job_id: int) -> Job:
    """The job, or NotFound (cannot see it) / Forbidden (can see it, may not act on it)."""
    job = await get_visible_job(session, actor, job_id)
    if not can_act(actor, job):
        raise Forbidden(_("Only the job's owner or a manager of its project may do that."))
    return job
