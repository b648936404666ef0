"""The poller's idle check of one cluster's running sessions, within a fixed budget.

A check reads at most ``batch`` running sessions (those asked longest ago first) in one short
read, closed before anything remote; asks each one's app through its probe (one HTTP request
to its server, as its owner, through the route the proxy uses); ends, as their owners' End
would (``scancel`` as the owner), those idle to their limit and not kept meanwhile; then
writes what it learnt, the warnings' notifications and the ends' history in one short
transaction. So a check costs at most ``2 * batch`` remote calls and holds no connection
during any of them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import httpx
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.audit.service import SYSTEM, record_action
from app.config import Settings
from app.db import unit_of_work
from app.interactive.connection import node_of, opener_for
from app.interactive.definitions import AppDefinition
from app.interactive.idle import PROBES, ProbeContext
from app.interactive.idle_rules import Decision, IdleState, Limits, Verdict, decide
from app.interactive.sessions import BASE_PATH
from app.interactive.upstream import Upstream
from app.jobs import event_notes
from app.jobs import repository as jobs_repository
from app.models.interactive import InteractiveSession
from app.models.jobs import Job
from app.models.users import UserClusterAccount
from app.notifications.session_outbox import record_session_idle
from app.scheduler.base import SchedulerAdapter
from app.scheduler.errors import JobNotFound, SchedulerError
from app.vocabulary.job_states import JobStateName

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class IdleWatch:
    """The apps, the client that reaches their servers and the site's idle settings."""

    definitions: Mapping[str, AppDefinition]
    client: httpx.AsyncClient
    site_limit: timedelta | None
    warning: timedelta
    batch: int = 5
    every: int = 3

    @classmethod
    def of(
        cls, settings: Settings, definitions: Mapping[str, AppDefinition], client: httpx.AsyncClient
    ) -> IdleWatch:
        limit = timedelta(seconds=settings.idle_limit) if settings.idle_limit > 0 else None
        return cls(
            definitions,
            client,
            limit,
            timedelta(seconds=settings.idle_warning),
            settings.idle_batch,
            settings.idle_every,
        )

    def limits_for(self, app: str) -> Limits | None:
        """The app's idle limits; None when its sessions are never ended for idleness."""
        definition = self.definitions.get(app)
        if definition is None or not definition.idle.is_watched:
            return None
        minutes = definition.idle.limit_minutes
        limit = self.site_limit if minutes is None else timedelta(minutes=minutes)
        return None if limit is None else Limits(limit, self.warning)

    @property
    def watched_apps(self) -> list[str]:
        return sorted(name for name in self.definitions if self.limits_for(name) is not None)


@dataclass(frozen=True, slots=True)
class Watched:
    """A running session as the read found it: everything its probe and its end need."""

    id: int
    uuid: str
    app: str
    job_id: int
    slurm_job_id: str
    owner_user_id: int
    username: str
    node_list: str | None
    port: int
    secret: str
    state: IdleState
    started_at: datetime | None = None
    viewed_at: datetime | None = None


async def load_watched(
    sessionmaker: async_sessionmaker[AsyncSession], cluster: str, watch: IdleWatch
) -> list[Watched]:
    """The running sessions of watched apps on ``cluster``, longest unasked first."""
    apps = watch.watched_apps
    if not apps:
        return []
    query = (
        select(InteractiveSession, Job.slurm_job_id, Job.node_list, UserClusterAccount.username)
        .join(Job, Job.id == InteractiveSession.job_id)
        .join(
            UserClusterAccount,
            (UserClusterAccount.user_id == InteractiveSession.owner_user_id)
            & (UserClusterAccount.cluster == Job.cluster),
        )
        .where(
            Job.cluster == cluster,
            Job.state == JobStateName.RUNNING,
            Job.slurm_job_id.is_not(None),
            InteractiveSession.app.in_(apps),
            InteractiveSession.ready_at.is_not(None),
            InteractiveSession.idle_ended_at.is_(None),
            InteractiveSession.port.is_not(None),
            InteractiveSession.secret.is_not(None),
        )
        .order_by(InteractiveSession.idle_checked_at.asc().nulls_first(), InteractiveSession.id)
        .limit(watch.batch)
    )
    async with sessionmaker() as session:
        rows = (await session.execute(query)).unique().all()
    return [
        _watched(row, slurm_id or "", node_list, username)
        for row, slurm_id, node_list, username in rows
    ]


def _watched(
    row: InteractiveSession, slurm_id: str, node_list: str | None, username: str
) -> Watched:
    return Watched(
        id=row.id,
        uuid=row.uuid,
        app=row.app,
        job_id=row.job_id,
        slurm_job_id=slurm_id,
        owner_user_id=row.owner_user_id,
        username=username,
        node_list=node_list,
        port=row.port or 0,
        secret=row.secret or "",
        state=IdleState(row.kept_at, row.idle_warned_at, row.idle_ends_at),
        started_at=row.ready_at,
        viewed_at=row.viewed_at,
    )


def _target(
    watched: Watched, definition: AppDefinition, adapter: SchedulerAdapter
) -> Upstream | None:
    host = node_of(watched.node_list)
    if host is None:
        return None
    auth = definition.auth
    opener = opener_for(adapter, watched.username)
    return Upstream(host, watched.port, auth.header, f"{auth.prefix}{watched.secret}", opener)


async def probe(
    watched: Watched, watch: IdleWatch, adapter: SchedulerAdapter, now: datetime
) -> datetime | None:
    """When the session was last active, by its app's probe; None when it cannot tell."""
    definition = watch.definitions[watched.app]
    idle = definition.idle
    context = ProbeContext(
        session_id=watched.id,
        session_uuid=watched.uuid,
        target=_target(watched, definition, adapter),
        base_path=BASE_PATH.format(uuid=watched.uuid),
        client=watch.client,
        now=now,
        path=idle.path,
        field=idle.field,
        busy_path=idle.busy_path,
        busy_field=idle.busy_field,
        busy_value=idle.busy_value,
        started_at=watched.started_at,
        viewed_at=watched.viewed_at,
    )
    try:
        return await PROBES[idle.probe].probe(context)
    except (httpx.HTTPError, SchedulerError, OSError):
        logger.warning("idle probe of session %s failed", watched.id, exc_info=True)
        return None


async def _kept_since_read(
    sessionmaker: async_sessionmaker[AsyncSession], ending: Sequence[Watched]
) -> set[int]:
    """Those of ``ending`` whose owner chose "Keep it" after the check read them."""
    if not ending:
        return set()
    ids = [w.id for w in ending]
    async with sessionmaker() as session:
        found = await session.execute(
            select(InteractiveSession.id, InteractiveSession.kept_at).where(
                InteractiveSession.id.in_(ids)
            )
        )
        now_kept = {session_id: kept_at for session_id, kept_at in found}
    return {w.id for w in ending if now_kept.get(w.id) != w.state.kept_at}


async def end_idle(adapter: SchedulerAdapter, watched: Watched) -> bool:
    """Cancel the session's job as its owner; True when Slurm took it (or it had ended)."""
    try:
        await adapter.cancel([watched.slurm_job_id], watched.username)
    except JobNotFound:
        return True
    except SchedulerError:
        logger.warning("ending idle session %s failed", watched.id, exc_info=True)
        return False
    return True


def _apply(row: InteractiveSession, decision: Decision, now: datetime) -> None:
    row.idle_checked_at = now
    if decision.verdict == Verdict.UNKNOWN:
        return
    row.idle_since = decision.idle_since
    if decision.verdict == Verdict.IN_USE:
        row.idle_warned_at = row.idle_ends_at = None
    elif decision.verdict == Verdict.WARN:
        row.idle_warned_at, row.idle_ends_at = now, decision.ends_at


async def _record_end(
    session: AsyncSession, row: InteractiveSession, limit: timedelta, now: datetime
) -> None:
    row.idle_ended_at = now
    seconds = int(limit.total_seconds())
    note = event_notes.ended_idle(seconds)
    state = JobStateName.RUNNING
    jobs_repository.add_event(session, row.job_id, state, state, reason=note, source="system")
    await record_action(
        session, None, SYSTEM, "session.end_idle", ("job", row.job_id), idle_seconds=seconds
    )


async def record_outcome(
    sessionmaker: async_sessionmaker[AsyncSession],
    decided: Sequence[tuple[Watched, Decision]],
    ended: Mapping[int, timedelta],
    now: datetime,
) -> None:
    """What the check learnt, in one transaction: rows, warnings' notifications, ends
    (``ended``: the sessions Slurm took the cancel of, with their idle limits)."""
    async with unit_of_work(sessionmaker) as session:
        for watched, decision in decided:
            row = await session.get(InteractiveSession, watched.id)
            if row is None:
                continue
            if row.kept_at != watched.state.kept_at:
                # Kept while it was being asked: the owner's choice stands, the answer is old.
                continue
            _apply(row, decision, now)
            if decision.verdict == Verdict.WARN:
                await record_session_idle(session, row.owner_user_id, row.job_id)
            if watched.id in ended:
                await _record_end(session, row, ended[watched.id], now)


async def check_idle(
    sessionmaker: async_sessionmaker[AsyncSession],
    cluster: str,
    adapter: SchedulerAdapter,
    watch: IdleWatch,
    now: datetime,
) -> int:
    """One idle check of ``cluster``; returns the remote calls it made."""
    watched = await load_watched(sessionmaker, cluster, watch)
    limits = {w.id: found for w in watched if (found := watch.limits_for(w.app)) is not None}
    asked = [w for w in watched if w.id in limits]
    # Side by side: a check takes as long as its slowest app, not as all of them together,
    # so it stays well within the poller's lease.
    answers = await asyncio.gather(*(probe(w, watch, adapter, now) for w in asked))
    decided = [
        (w, decide(last_active, w.state, limits[w.id], now))
        for w, last_active in zip(asked, answers, strict=True)
    ]
    ending = [w for w, d in decided if d.verdict == Verdict.END]
    kept = await _kept_since_read(sessionmaker, ending)
    ended = {
        w.id: limits[w.id].limit for w in ending if w.id not in kept and await end_idle(adapter, w)
    }
    await record_outcome(sessionmaker, decided, ended, now)
    return len(decided) + len(ending) - len(kept)
