"""The feed behind browser notifications: the signed-in user's own jobs' notable changes.

A tab asks with the last event id it has seen and gets what came after; the first request
(no id) only learns where the feed stands, so opening a tab does not replay old changes.
The user's rules whose channel is the browser decide what is notable: each its event
(starts, ends, fails) for all their jobs or one. With no such rule, a start or an end is.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.jobs.states import TERMINAL_STATES
from app.models.jobs import Job, JobEvent
from app.models.notifications import NotificationRule
from app.notifications.events import events_for
from app.users.actor import Actor
from app.vocabulary.job_states import JobStateName
from app.vocabulary.notify import Channel, NotifyEvent

FEED_LIMIT = 20
_NOTABLE = (JobStateName.RUNNING, *sorted(TERMINAL_STATES))


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


@dataclass(frozen=True, slots=True)
class _Wanted:
    """What the actor's browser rules ask to be shown: events for all jobs, or for one."""

    everywhere: frozenset[str]
    per_job: dict[int, frozenset[str]]

    def allows(self, job_id: int, events: list[str]) -> bool:
        wanted = self.everywhere | self.per_job.get(job_id, frozenset())
        return any(event in wanted for event in events)


DEFAULT_EVENTS = frozenset({NotifyEvent.STARTED.value, NotifyEvent.ENDED.value})


async def _wanted(session: AsyncSession, actor: Actor) -> _Wanted:
    query = select(NotificationRule.event, NotificationRule.job_id).where(
        NotificationRule.user_id == actor.user_id, NotificationRule.channel == Channel.BROWSER
    )
    rules = list(await session.execute(query))
    if not rules:
        return _Wanted(DEFAULT_EVENTS, {})
    per_job: dict[int, set[str]] = {}
    for event, job_id in rules:
        if job_id is not None:
            per_job.setdefault(job_id, set()).add(event)
    everywhere = frozenset(event for event, job_id in rules if job_id is None)
    return _Wanted(everywhere, {job: frozenset(found) for job, found in per_job.items()})


async def changes_after(session: AsyncSession, actor: Actor, after: int) -> list[Change]:
    """The actor's jobs' changes after event ``after`` that their browser rules ask for,
    oldest first."""
    wanted = await _wanted(session, actor)
    query = (
        select(
            JobEvent.id,
            Job.id,
            Job.name,
            Job.slurm_job_id,
            JobEvent.to_state,
            JobEvent.from_state,
            Job.started_at,
        )
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
    changes = []
    for event_id, job_id, name, slurm_id, to_state, from_state, started in await session.execute(
        query
    ):
        events = events_for(from_state, to_state, has_start_time=started is not None)
        if wanted.allows(job_id, events):
            changes.append(Change(event_id, job_id, name, slurm_id, to_state))
    return changes
