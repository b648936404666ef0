"""The feed behind browser notifications: the signed-in user's own jobs' notable changes.

A tab asks with the last event id it has seen and gets what came after; the first request
(no id) only learns where the feed stands, so opening a tab does not replay old changes.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.jobs.states import RUNNING, TERMINAL_STATES
from app.models import Job, JobEvent
from app.users.actor import Actor

FEED_LIMIT = 20
_NOTABLE = (RUNNING, *sorted(TERMINAL_STATES))


@dataclass(frozen=True, slots=True)
class Change:
    event_id: int
    job_id: int
    name: str
    slurm_job_id: str | None
    state: str


async def feed_position(session: AsyncSession, actor: Actor) -> int:
    """The id of the actor's latest job event (0 when there is none)."""
    query = (
        select(func.max(JobEvent.id))
        .join(Job, Job.id == JobEvent.job_id)
        .where(Job.owner_user_id == actor.user_id)
    )
    return int(await session.scalar(query) or 0)


async def changes_after(session: AsyncSession, actor: Actor, after: int) -> list[Change]:
    """The actor's jobs that started or ended after event ``after``, oldest first."""
    query = (
        select(JobEvent.id, Job.id, Job.name, Job.slurm_job_id, JobEvent.to_state)
        .join(Job, Job.id == JobEvent.job_id)
        .where(
            Job.owner_user_id == actor.user_id,
            Job.array_parent_id.is_(None),
            JobEvent.id > after,
            JobEvent.source == "poller",
            JobEvent.to_state.in_(_NOTABLE),
            JobEvent.from_state.is_distinct_from(JobEvent.to_state),
        )
        .order_by(JobEvent.id)
        .limit(FEED_LIMIT)
    )
    return [Change(*row) for row in await session.execute(query)]
