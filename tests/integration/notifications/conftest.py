"""Rules and jobs for the notification tests, made as the service would make them."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models.jobs import Job
from app.models.notifications import Notification, NotificationRule
from app.models.users import User
from app.notifications import signing


async def add_rule(
    sessionmaker: async_sessionmaker[AsyncSession],
    user: User,
    event: str = "ended",
    *,
    job: Job | None = None,
    webhook_url: str | None = None,
) -> NotificationRule:
    async with sessionmaker() as session:
        rule = NotificationRule(
            user_id=user.id,
            event=event,
            job_id=job.id if job else None,
            channel="webhook" if webhook_url else "email",
            webhook_url=webhook_url,
            secret=signing.new_secret() if webhook_url else None,
        )
        session.add(rule)
        await session.commit()
        return rule


async def outbox_rows(sessionmaker: async_sessionmaker[AsyncSession]) -> list[Notification]:
    async with sessionmaker() as session:
        return list(await session.scalars(select(Notification).order_by(Notification.id)))
