"""Spending an app host's launch ticket: once for the whole site, not once per process.

A ticket is signed, so any web worker or replica can check it; whether it was already used
is shared state, kept in the database. The nonce is inserted under its primary key in one
short transaction: of two exchanges racing in two processes, PostgreSQL makes the second
wait for the first and then refuses its duplicate key, and SQLite runs them one after the
other, so exactly one of them is told it spent the ticket.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db import unit_of_work
from app.models.web_sessions import SpentAppTicket


async def _purge(session: AsyncSession, now: datetime) -> None:
    """Delete the rows of expired tickets, leaving alone any another exchange is deleting
    (two purges locking the same rows in different orders could deadlock)."""
    expired = select(SpentAppTicket.nonce).where(SpentAppTicket.expires_at < now)
    if session.get_bind().dialect.name == "postgresql":
        expired = expired.with_for_update(skip_locked=True)
    await session.execute(delete(SpentAppTicket).where(SpentAppTicket.nonce.in_(expired)))


async def spend(
    sessionmaker: async_sessionmaker[AsyncSession],
    nonce: str,
    now: datetime,
    keep_for: timedelta,
) -> bool:
    """True the first time ``nonce`` is spent anywhere on the site; False for a replay.

    The row is kept for ``keep_for`` (longer than a ticket lives), then deleted by a later
    exchange: an expired ticket is refused by its signature's timestamp alone."""
    try:
        async with unit_of_work(sessionmaker) as session:
            await _purge(session, now)
            session.add(SpentAppTicket(nonce=nonce, expires_at=now + keep_for))
    except IntegrityError:
        return False
    return True
