"""Slows down password guessing: attempts per login, per address and for the whole site.

Every attempt first increments its three counters with one atomic upsert each (``INSERT ...
ON CONFLICT DO UPDATE ... RETURNING``), committed before the password is checked when the
caller hands in a sessionmaker. Parallel guesses therefore queue on the counter row and the
sixth one sees six, instead of all reading "four failures so far" and all being evaluated.
A success gives back the slot it took in every counter, so signing in often never locks anyone
out, but it never clears failures: a guesser who also knows one right password (or whose victim
signs in meanwhile) gets no fresh five. Counters whose window has passed are deleted on the way.

Every transaction here touches the counter rows in one order (sorted by key), and the purge
skips rows another transaction holds, so concurrent sign-ins wait for each other on
PostgreSQL but never deadlock.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import case, delete, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models.base import utc_now
from app.models.web_sessions import SignInCounter

MAX_FAILURES = 5
# One address may stand for many people (a campus NAT, a proxy not declared as trusted), so it
# gets more room than one login; one attacker cycling logins still meets it quickly.
MAX_ADDRESS_FAILURES = 20
# Password spraying tries one password on many logins from many addresses: only a
# site-wide count sees it. High enough that a busy morning of typos does not reach it.
SITE_LIMIT = 100
WINDOW = timedelta(minutes=5)
SITE_KEY = "site"


@dataclass(frozen=True, slots=True)
class Throttle:
    is_blocked: bool
    retry_after: timedelta = timedelta(0)
    is_site_wide: bool = False

    @property
    def retry_minutes(self) -> int:
        return max(1, math.ceil(self.retry_after.total_seconds() / 60))


def _keys(login: str, address: str, site_limit: int = SITE_LIMIT) -> dict[str, int]:
    """Each counter this attempt moves and its limit, in the one order rows are locked."""
    limits = {
        f"login:{login[:150]}": MAX_FAILURES,
        f"address:{address[:64]}": MAX_ADDRESS_FAILURES,
        SITE_KEY: site_limit,
    }
    return dict(sorted(limits.items()))


@asynccontextmanager
async def _own_transaction(
    session: AsyncSession, sessionmaker: async_sessionmaker[AsyncSession] | None
) -> AsyncIterator[AsyncSession]:
    if sessionmaker is None:
        yield session
        return
    async with sessionmaker() as own, own.begin():
        yield own


async def _increment(session: AsyncSession, key: str, now: datetime) -> tuple[int, datetime]:
    dialect = session.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    expired = SignInCounter.window_start < now - WINDOW
    statement = (
        insert(SignInCounter)
        .values(key=key, window_start=now, attempts=1)
        .on_conflict_do_update(
            index_elements=[SignInCounter.key],
            set_={
                "attempts": case((expired, 1), else_=SignInCounter.attempts + 1),
                "window_start": case((expired, now), else_=SignInCounter.window_start),
            },
        )
        .returning(SignInCounter.attempts, SignInCounter.window_start)
    )
    attempts, started = (await session.execute(statement)).one()
    return int(attempts), started


async def _purge(session: AsyncSession, now: datetime) -> None:
    """Delete counters whose window has passed, leaving alone any another sign-in holds."""
    expired = select(SignInCounter.key).where(SignInCounter.window_start < now - WINDOW)
    if session.get_bind().dialect.name == "postgresql":
        expired = expired.with_for_update(skip_locked=True)
    await session.execute(delete(SignInCounter).where(SignInCounter.key.in_(expired)))


async def reserve(
    session: AsyncSession,
    login: str,
    address: str,
    sessionmaker: async_sessionmaker[AsyncSession] | None = None,
    site_limit: int = SITE_LIMIT,
) -> Throttle:
    """Count this attempt; blocked when any counter is over its limit within WINDOW."""
    now = utc_now()
    blocked_until: list[tuple[datetime, bool]] = []
    async with _own_transaction(session, sessionmaker) as counters:
        await _purge(counters, now)
        for key, limit in _keys(login, address, site_limit).items():
            attempts, started = await _increment(counters, key, now)
            if attempts > limit:
                blocked_until.append((started + WINDOW, key == SITE_KEY))
    if not blocked_until:
        return Throttle(is_blocked=False)
    until, is_site_wide = max(blocked_until)
    return Throttle(is_blocked=True, retry_after=until - now, is_site_wide=is_site_wide)


async def succeeded(
    session: AsyncSession,
    login: str,
    address: str,
    sessionmaker: async_sessionmaker[AsyncSession] | None = None,
) -> None:
    """A right password: each counter gets back the slot this attempt took, failures stay."""
    async with _own_transaction(session, sessionmaker) as counters:
        for key in _keys(login, address):
            await counters.execute(
                update(SignInCounter)
                .where(SignInCounter.key == key, SignInCounter.attempts > 0)
                .values(attempts=SignInCounter.attempts - 1)
            )
