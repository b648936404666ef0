"""Outbox rows for a project that used 80 % or 95 % of its allocation: one per rule of its
managers that asks for allocation notifications, written in the caller's transaction."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.models.base import utc_now
from app.models.notifications import Notification, NotificationRule
from app.models.projects import Membership
from app.vocabulary.notify import NotifyEvent


async def record_allocation_reached(session: AsyncSession, project_id: int, threshold: int) -> int:
    """Queue the notifications; the caller makes sure each threshold is announced once."""
    managers = select(Membership.user_id).where(
        Membership.project_id == project_id, Membership.role == "manager"
    )
    rules = await session.scalars(
        select(NotificationRule).where(
            NotificationRule.event == NotifyEvent.ALLOCATION,
            NotificationRule.user_id.in_(managers),
        )
    )
    now = utc_now()
    rows = [
        Notification(
            rule_id=rule.id,
            user_id=rule.user_id,
            project_id=project_id,
            threshold=threshold,
            event=NotifyEvent.ALLOCATION,
            job_state="",
            next_attempt_at=now,
            created_at=now,
        )
        for rule in rules
    ]
    session.add_all(rows)
    return len(rows)
