"""The outbox: rows written with each job state change, claimed and settled by dispatchers.

Writing happens inside the poller's transaction (``record_state_changes``), so a state change
and its notifications commit together or not at all. A duplicate (a second poller applying
the same change) hits the unique key and is dropped by ``ON CONFLICT DO NOTHING`` instead of
failing the poller's whole transaction.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, and_, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db import unit_of_work
from app.models.base import utc_now
from app.models.interactive import InteractiveSession
from app.models.jobs import Job
from app.models.notifications import DeliveryAttempt, Notification, NotificationRule
from app.models.projects import Project
from app.models.users import User
from app.notifications.events import events_for
from app.notifications.retry import MAX_ATTEMPTS, retry_delay
from app.vocabulary.notify import Channel, NotifyEvent


@dataclass(frozen=True, slots=True)
class StateChange:
    job_id: int
    owner_user_id: int
    from_state: str | None
    to_state: str
    has_start_time: bool


@dataclass(frozen=True, slots=True)
class Claimed:
    """A notification this dispatcher holds, with everything its delivery needs."""

    id: int
    token: str
    attempt: int
    user_id: int
    event: str
    job_state: str
    channel: str
    email: str | None
    webhook_url: str | None
    secret: str | None
    job: dict[str, Any]
    # The recipient's chosen language (None: the browser's, which an e-mail cannot know).
    locale: str | None = None
    # An allocation notification's project (its ``job`` is empty).
    project: dict[str, Any] | None = None
    # An idle warning's session: since when it is idle and when it will be ended.
    session: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Outcome:
    is_success: bool
    status_code: int | None = None
    response: str | None = None
    error: str | None = None
    # Trying again cannot help (a refused address, a mailbox that does not exist).
    is_permanent: bool = False


# Ids per statement: a cycle that changes 100,000 jobs at once (a mass cancel) must not bind
# more parameters than PostgreSQL (65,535) or SQLite (32,766) takes in one statement.
LOOKUP_CHUNK = 1_000


def _chunks(values: set[int]) -> list[list[int]]:
    ordered = sorted(values)
    return [ordered[start : start + LOOKUP_CHUNK] for start in range(0, len(ordered), LOOKUP_CHUNK)]


async def _rules_for(
    session: AsyncSession, changes: Sequence[StateChange]
) -> list[NotificationRule]:
    # A browser rule is shown by its owner's open tab (browser.changes_after), not sent.
    sent = NotificationRule.channel != Channel.BROWSER
    conditions = [
        and_(NotificationRule.job_id.is_(None), NotificationRule.user_id.in_(owners))
        for owners in _chunks({change.owner_user_id for change in changes})
    ] + [NotificationRule.job_id.in_(jobs) for jobs in _chunks({c.job_id for c in changes})]
    rules: dict[int, NotificationRule] = {}
    for condition in conditions:
        for rule in await session.scalars(select(NotificationRule).where(condition, sent)):
            rules[rule.id] = rule
    return list(rules.values())


def _rules_by_target(
    rules: Sequence[NotificationRule],
) -> tuple[dict[int, list[NotificationRule]], dict[int, list[NotificationRule]]]:
    """Rules on every job of a user, by user; rules on one job, by job."""
    by_owner: dict[int, list[NotificationRule]] = {}
    by_job: dict[int, list[NotificationRule]] = {}
    for rule in rules:
        if rule.job_id is None:
            by_owner.setdefault(rule.user_id, []).append(rule)
        else:
            by_job.setdefault(rule.job_id, []).append(rule)
    return by_owner, by_job


def _outbox_rows(
    rules: Sequence[NotificationRule], changes: Sequence[StateChange], now: datetime
) -> list[dict[str, Any]]:
    by_owner, by_job = _rules_by_target(rules)
    return [
        {
            "rule_id": rule.id,
            "user_id": rule.user_id,
            "job_id": change.job_id,
            "event": event,
            "job_state": change.to_state,
            "status": "pending",
            "attempts": 0,
            "next_attempt_at": now,
            "created_at": now,
        }
        for change in changes
        for event in events_for(
            change.from_state, change.to_state, has_start_time=change.has_start_time
        )
        for rule in (*by_owner.get(change.owner_user_id, ()), *by_job.get(change.job_id, ()))
        if rule.event == event
    ]


async def record_state_changes(session: AsyncSession, changes: Sequence[StateChange]) -> int:
    """Outbox rows for the rules these changes meet, in the caller's transaction."""
    if not changes:
        return 0
    rows = _outbox_rows(await _rules_for(session, changes), changes, utc_now())
    if not rows:
        return 0
    dialect = session.get_bind().dialect.name
    insert = (postgresql.insert if dialect == "postgresql" else sqlite.insert)(Notification)
    statement = insert.on_conflict_do_nothing(index_elements=["rule_id", "job_id", "event"])
    await session.execute(statement, rows)
    return len(rows)


def _unclaimed(now: datetime) -> ColumnElement[bool]:
    return or_(Notification.claimed_until.is_(None), Notification.claimed_until < now)


def _claimable(now: datetime) -> ColumnElement[bool]:
    return and_(
        Notification.status == "pending",
        Notification.next_attempt_at <= now,
        Notification.attempts < MAX_ATTEMPTS,
        _unclaimed(now),
    )


def _abandoned(now: datetime) -> ColumnElement[bool]:
    """Rows whose every attempt was claimed and never settled (each dispatcher holding
    them died): not claimed again, so no row is retried forever."""
    return and_(
        Notification.status == "pending",
        Notification.attempts >= MAX_ATTEMPTS,
        _unclaimed(now),
    )


def _job_facts(job: Job) -> dict[str, Any]:
    return {
        "id": job.id,
        "slurm_job_id": job.slurm_job_id,
        "name": job.name,
        "cluster": job.cluster,
        "state": job.state,
        "exit_code": job.exit_code,
        "started_at": job.started_at.isoformat() if job.started_at else None,
        "ended_at": job.ended_at.isoformat() if job.ended_at else None,
    }


def _project_facts(project: Project | None, threshold: int | None) -> dict[str, Any] | None:
    if project is None:
        return None
    return {
        "id": project.id,
        "name": project.name,
        "cluster": project.cluster,
        "account": project.slurm_account,
        "threshold": threshold,
    }


def _session_facts(row: Notification, found: InteractiveSession | None) -> dict[str, Any] | None:
    if found is None or row.event != NotifyEvent.SESSION_IDLE:
        return None
    return {
        "id": found.id,
        "app": found.app,
        "idle_since": found.idle_since.isoformat() if found.idle_since else None,
        "ends_at": found.idle_ends_at.isoformat() if found.idle_ends_at else None,
    }


async def _claimed_rows(session: AsyncSession, token: str) -> list[Claimed]:
    query = (
        select(
            Notification,
            NotificationRule,
            Job,
            User.email,
            User.locale,
            Project,
            InteractiveSession,
        )
        .join(NotificationRule, NotificationRule.id == Notification.rule_id)
        .outerjoin(Job, Job.id == Notification.job_id)
        .outerjoin(Project, Project.id == Notification.project_id)
        .outerjoin(InteractiveSession, InteractiveSession.job_id == Notification.job_id)
        .join(User, User.id == Notification.user_id)
        .where(Notification.claim_token == token)
        .order_by(Notification.id)
    )
    return [
        Claimed(
            id=row.id,
            token=token,
            attempt=row.attempts,
            user_id=row.user_id,
            event=row.event,
            job_state=row.job_state,
            channel=rule.channel,
            email=email,
            webhook_url=rule.webhook_url,
            secret=rule.secret,
            job=_job_facts(job) | {"state": row.job_state} if job is not None else {},
            locale=locale,
            project=_project_facts(project, row.threshold),
            session=_session_facts(row, found),
        )
        for row, rule, job, email, locale, project, found in (await session.execute(query)).unique()
    ]


async def claim(
    sessionmaker: async_sessionmaker[AsyncSession],
    *,
    now: datetime,
    limit: int,
    duration: timedelta,
) -> list[Claimed]:
    """Take up to ``limit`` due notifications for ``duration``; no other dispatcher gets them.

    One UPDATE whose subquery picks the candidates, so choosing and claiming are one step.
    PostgreSQL locks the candidates with SKIP LOCKED, so two dispatchers take disjoint batches
    without waiting on each other. SQLite runs one writer at a time and evaluates the subquery
    under its write lock, so the second dispatcher chooses among the rows the first left.
    """
    token = str(uuid.uuid4())
    candidates = (
        select(Notification.id)
        .where(_claimable(now))
        .order_by(Notification.next_attempt_at, Notification.id)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    async with unit_of_work(sessionmaker) as session:
        # A plain read first: an idle cycle should not take SQLite's write lock.
        due = or_(_claimable(now), _abandoned(now))
        if await session.scalar(select(Notification.id).where(due).limit(1)) is None:
            return []
        await session.execute(
            update(Notification)
            .where(_abandoned(now))
            .values(status="failed", claim_token=None, claimed_until=None)
            .execution_options(synchronize_session=False)
        )
        await session.execute(
            update(Notification)
            .where(Notification.id.in_(candidates), _claimable(now))
            .values(
                claim_token=token,
                claimed_until=now + duration,
                attempts=Notification.attempts + 1,
            )
            .execution_options(synchronize_session=False)
        )
        return await _claimed_rows(session, token)


def _settled(claimed: Claimed, outcome: Outcome, now: datetime) -> dict[str, Any]:
    if outcome.is_success:
        return {"status": "sent", "sent_at": now}
    wait = None if outcome.is_permanent else retry_delay(claimed.attempt)
    if wait is None:
        return {"status": "failed"}
    return {"status": "pending", "next_attempt_at": now + wait}


async def settle(
    sessionmaker: async_sessionmaker[AsyncSession],
    claimed: Claimed,
    outcome: Outcome,
    now: datetime,
) -> None:
    """Log the attempt and release the claim: sent, failed for good, or due again later.

    The row changes only while this claim is still the row's: a dispatcher that stalled past
    its claim logs what happened but leaves the row to whoever holds it now.
    """
    async with unit_of_work(sessionmaker) as session:
        session.add(
            DeliveryAttempt(
                notification_id=claimed.id,
                user_id=claimed.user_id,
                attempt=claimed.attempt,
                at=now,
                channel=claimed.channel,
                is_success=outcome.is_success,
                status_code=outcome.status_code,
                response=(outcome.response or None) and (outcome.response or "")[:500],
                error=outcome.error,
            )
        )
        await session.execute(
            update(Notification)
            .where(Notification.id == claimed.id, Notification.claim_token == claimed.token)
            .values(claim_token=None, claimed_until=None, **_settled(claimed, outcome, now))
            .execution_options(synchronize_session=False)
        )
