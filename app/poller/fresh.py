"""A job just submitted through the portal is looked at sooner (ADR 0022).

Its page asks every second for a while, but shows only what the last cycle wrote: with a
10 s interval a one-second job would read "Pending" long after it has printed its output.
So while the lease holder waits for its next cycle it asks the database, once a second and
on the primary key alone, whether a job was submitted to its cluster since it last looked;
for ``window`` seconds after one was, cycles come every ``interval`` seconds instead. The
budget of each cycle is unchanged (ADR 0002); only their pace quickens, and only then.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models.jobs import Job

logger = logging.getLogger(__name__)
FRESH_WINDOW = 30.0
LOOK_EVERY = 1.0


async def newest_submission(
    sessionmaker: async_sessionmaker[AsyncSession], cluster: str, after_id: int | None
) -> int | None:
    """The newest row id overall when ``after_id`` is None (where to start watching from);
    otherwise that of a job submitted through the portal to ``cluster`` since ``after_id``.
    Task rows and jobs found in the queue are the poller's own writes, not submissions."""
    query = select(func.max(Job.id))
    if after_id is not None:
        query = query.where(
            Job.id > after_id,
            Job.cluster == cluster,
            Job.array_parent_id.is_(None),
            Job.submitted_outside.is_(False),
        )
    async with sessionmaker() as session:
        return await session.scalar(query)


@dataclass
class FreshWatch:
    """When the next cycle of one cluster may come early; ``interval`` 0 never does."""

    interval: float
    window: float = FRESH_WINDOW
    last_id: int | None = None
    fresh_until: float = 0.0

    def is_on(self, poll_interval: float) -> bool:
        return 0 < self.interval < poll_interval

    async def wants_a_look(
        self, sessionmaker: async_sessionmaker[AsyncSession], cluster: str, now: float
    ) -> bool:
        """Whether a cycle should run now: a submission is fresh, or has just been made."""
        if now < self.fresh_until:
            return True
        try:
            newest = await newest_submission(sessionmaker, cluster, self.last_id)
        except (SQLAlchemyError, OSError):
            # The cycle itself will meet the same trouble and back off; nothing to add here.
            logger.debug("cannot look for fresh submissions on %s", cluster, exc_info=True)
            return False
        is_news = self.last_id is not None and newest is not None
        self.last_id = newest or self.last_id or 0
        if is_news:
            self.fresh_until = now + self.window
        return is_news
