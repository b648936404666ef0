"""A user's shell limit holds across web processes: two ShellServices (two workers) on one
database, and slots taken at once by many connections, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.audit.service import Origin
from app.config import Settings
from app.db import create_engine, create_sessionmaker
from app.models.base import utc_now
from app.models.shells import OpenShellSlot
from app.scheduler.fake import FakeScheduler
from app.scheduler.fake_terminals import FakeTerminals
from app.scheduler.terminals import TerminalSize
from app.shell import slots
from app.shell.service import ShellService, TooManyShells
from app.users.actor import Actor
from tests.factories import fake_registry
from tests.world import World

# The lock differs by backend (FOR UPDATE, SQLite's write lock): both are proven.
pytestmark = pytest.mark.sqlite

Maker = async_sessionmaker[AsyncSession]
SIZE = TerminalSize(columns=80, rows=24)
WEB = Origin("web", "127.0.0.1")


def _worker(db_url: str, terminals: FakeTerminals, limit: int) -> tuple[ShellService, Maker]:
    """A web process's shell service: its own engine, the same database."""
    scheduler = FakeScheduler()
    scheduler.terminals = terminals  # type: ignore[attr-defined]
    settings = Settings(env="dev", database_url=db_url, shell_max_per_user=limit)
    made = create_sessionmaker(create_engine(db_url))
    return ShellService(settings, fake_registry(scheduler), made), made


def _alice(world: World) -> Actor:
    return Actor(world.alice.id, "alice", cluster_usernames={"testcluster": "alice"})


async def _held(sessionmaker: Maker, user_id: int) -> int:
    async with sessionmaker() as session:
        query = select(func.count()).where(OpenShellSlot.user_id == user_id)
        return (await session.scalar(query)) or 0


async def test_a_shell_open_in_one_worker_counts_in_the_other(db_url: str, world: World) -> None:
    terminals = FakeTerminals()
    first, made = _worker(db_url, terminals, limit=1)
    second, _ = _worker(db_url, terminals, limit=1)
    alice = _alice(world)
    async with first.open(alice, "testcluster", SIZE, WEB):
        with pytest.raises(TooManyShells, match="You already have 1 shell open"):
            async with second.open(alice, "testcluster", SIZE, WEB):
                pass
        assert len(terminals.open_now) == 1
    assert await _held(made, world.alice.id) == 0
    # Closed in the first worker, the slot is free in the second.
    async with second.open(alice, "testcluster", SIZE, WEB):
        assert await _held(made, world.alice.id) == 1


async def test_slots_taken_at_once_stop_at_the_limit(db_url: str, world: World) -> None:
    makers = [create_sessionmaker(create_engine(db_url)) for _ in range(8)]
    now = utc_now()
    taken = await asyncio.gather(
        *(slots.take(made, world.alice.id, "testcluster", 3, now) for made in makers)
    )
    assert sum(slot is not None for slot in taken) == 3
    assert await _held(makers[0], world.alice.id) == 3


async def test_a_slot_counts_while_renewed_and_stops_once_its_process_stopped_renewing(
    sessionmaker: Maker, world: World
) -> None:
    now = utc_now()
    held = await slots.take(sessionmaker, world.alice.id, "testcluster", 1, now)
    assert held is not None
    # Renewed two minutes in, it still counts four minutes in (stale after three).
    await slots.renew(sessionmaker, held, now + timedelta(minutes=2))
    later = now + timedelta(minutes=4)
    assert await slots.take(sessionmaker, world.alice.id, "testcluster", 1, later) is None
    # Its process died: never renewed again, it no longer counts and is cleared.
    gone = now + timedelta(minutes=2) + slots.STALE + timedelta(seconds=1)
    fresh = await slots.take(sessionmaker, world.alice.id, "testcluster", 1, gone)
    assert fresh is not None
    async with sessionmaker() as session:
        [row] = await session.scalars(select(OpenShellSlot))
        assert row.opened_at == gone  # the new slot; the dead one is gone
