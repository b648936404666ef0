"""Outbox rows for an interactive session idle long enough to be warned of its end: one per
rule of its owner's asking for ``session_idle``, for all their jobs or this one, written in
the caller's transaction.

A session kept and left idle again is warned again: the row of the earlier warning (the
outbox keeps one per rule, job and event) is made due once more, its delivery log kept.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from app.models.base import utc_now
from app.models.notifications import Notification, NotificationRule
from app.vocabulary.job_states import JobStateName
from app.vocabulary.notify import Channel, NotifyEvent


async def record_session_idle(session: AsyncSession, owner_user_id: int, job_id: int) -> int:
    """Queue the owner's idle warnings for the session whose job is ``job_id``."""
    rules = await session.scalars(
        select(NotificationRule.id).where(
            NotificationRule.event == NotifyEvent.SESSION_IDLE,
            NotificationRule.user_id == owner_user_id,
            or_(NotificationRule.job_id.is_(None), NotificationRule.job_id == job_id),
            NotificationRule.channel != Channel.BROWSER,
        )
    )
    now = utc_now()
    again: dict[str, Any] = {
        "status": "pending",
        "attempts": 0,
        "next_attempt_at": now,
        "claim_token": None,
        "claimed_until": None,
        "sent_at": None,
        "created_at": now,
    }
    rows = [
        {
            "rule_id": rule_id,
            "user_id": owner_user_id,
            "job_id": job_id,
            "event": NotifyEvent.SESSION_IDLE.value,
            "job_state": JobStateName.RUNNING.value,
        }
        | again
        for rule_id in rules
    ]
    if not rows:
        return 0
    dialect = session.get_bind().dialect.name
    insert = (postgresql.insert if dialect == "postgresql" else sqlite.insert)(Notification)
    statement = insert.on_conflict_do_update(
        index_elements=["rule_id", "job_id", "event"], set_=again
    )
    await session.execute(statement, rows)
    return len(rows)
