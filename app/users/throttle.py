"""Slows down password guessing: too many recent failures per login or per address."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute

from app.models import SignInAttempt, utc_now

MAX_FAILURES = 5
WINDOW = timedelta(minutes=5)


@dataclass(frozen=True, slots=True)
class Throttle:
    is_blocked: bool
    retry_after: timedelta = timedelta(0)

    @property
    def retry_minutes(self) -> int:
        return max(1, math.ceil(self.retry_after.total_seconds() / 60))


async def _oldest_of_recent(
    session: AsyncSession, column: InstrumentedAttribute[str], value: str, since: datetime
) -> datetime | None:
    rows = await session.execute(
        select(SignInAttempt.created_at)
        .where(column == value, SignInAttempt.created_at > since)
        .order_by(SignInAttempt.created_at.desc())
        .limit(MAX_FAILURES)
    )
    recent = list(rows.scalars())
    return recent[-1] if len(recent) >= MAX_FAILURES else None


async def check(session: AsyncSession, login: str, address: str) -> Throttle:
    """Blocked while MAX_FAILURES failures for the login or the address fall inside WINDOW."""
    now = utc_now()
    since = now - WINDOW
    blocking = [
        moment
        for moment in (
            await _oldest_of_recent(session, SignInAttempt.login, login, since),
            await _oldest_of_recent(session, SignInAttempt.address, address, since),
        )
        if moment is not None
    ]
    if not blocking:
        return Throttle(is_blocked=False)
    return Throttle(is_blocked=True, retry_after=max(blocking) + WINDOW - now)


async def record_failure(session: AsyncSession, login: str, address: str) -> None:
    session.add(SignInAttempt(login=login[:64], address=address[:64]))
    await session.flush()


async def forget_failures(session: AsyncSession, login: str) -> None:
    await session.execute(delete(SignInAttempt).where(SignInAttempt.login == login))


async def purge_old(session: AsyncSession) -> None:
    cutoff = utc_now() - WINDOW
    await session.execute(delete(SignInAttempt).where(SignInAttempt.created_at < cutoff))
