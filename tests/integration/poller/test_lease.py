"""Only one poller per cluster: the lease on both databases, and takeover between processes."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.config import Settings
from app.db import create_engine, create_sessionmaker
from app.models.clusters import PollerLease
from app.poller import lease
from app.poller.runner import run_poller
from app.scheduler.base import SchedulerAdapter
from tests.conftest import empty_all_tables
from tests.integration.poller.conftest import CLUSTER, CLUSTERS_FILE

# The portability tier: these also run on SQLite (ADR 0018).
pytestmark = pytest.mark.sqlite

T0 = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
TEN_SECONDS = timedelta(seconds=10)


async def test_second_holder_is_refused_until_the_lease_expires(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    assert await lease.acquire(sessionmaker, CLUSTER, "a", T0, TEN_SECONDS)
    assert not await lease.acquire(
        sessionmaker, CLUSTER, "b", T0 + timedelta(seconds=5), TEN_SECONDS
    )
    assert await lease.acquire(sessionmaker, CLUSTER, "a", T0 + timedelta(seconds=6), TEN_SECONDS)
    assert await lease.acquire(sessionmaker, CLUSTER, "b", T0 + timedelta(seconds=17), TEN_SECONDS)
    assert not await lease.acquire(
        sessionmaker, CLUSTER, "a", T0 + timedelta(seconds=18), TEN_SECONDS
    )


async def test_released_lease_is_taken_at_once(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    assert await lease.acquire(sessionmaker, CLUSTER, "a", T0, TEN_SECONDS)
    await lease.release(sessionmaker, CLUSTER, "a", T0 + timedelta(seconds=1))
    assert await lease.acquire(sessionmaker, CLUSTER, "b", T0 + timedelta(seconds=2), TEN_SECONDS)


@pytest.fixture
async def pg_sessionmaker(
    postgresql_database_url: str,
) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    engine = create_engine(postgresql_database_url)
    yield create_sessionmaker(engine)
    await engine.dispose()
    await empty_all_tables(postgresql_database_url)


async def lease_holder(sessionmaker: async_sessionmaker[AsyncSession]) -> str | None:
    async with sessionmaker() as session:
        return await session.scalar(
            select(PollerLease.holder).where(PollerLease.cluster == CLUSTER)
        )


async def wait_for_holder(
    sessionmaker: async_sessionmaker[AsyncSession], is_wanted: object, timeout: float
) -> str:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        holder = await lease_holder(sessionmaker)
        if holder is not None and is_wanted(holder):  # type: ignore[operator]
            return holder
        await asyncio.sleep(0.05)
    pytest.fail(f"lease still held by {await lease_holder(sessionmaker)!r}")


@pytest.mark.slurm
async def test_standby_poller_takes_over_within_two_intervals_of_a_crash(
    postgresql_database_url: str,
    pg_sessionmaker: async_sessionmaker[AsyncSession],
    slurm_adapter: SchedulerAdapter,
) -> None:
    interval = 2.0
    env = os.environ | {
        "PORTAL_DATABASE_URL": postgresql_database_url,
        "PORTAL_CLUSTERS_FILE": CLUSTERS_FILE,
        "PORTAL_POLL_INTERVAL": str(interval),
    }
    first = subprocess.Popen([sys.executable, "-m", "app.poller"], env=env)
    stop = asyncio.Event()
    standby_task: asyncio.Task[None] | None = None
    try:
        holder = await wait_for_holder(pg_sessionmaker, lambda h: True, timeout=30)
        settings = Settings(database_url=postgresql_database_url, poll_interval=interval)
        standby_task = asyncio.create_task(
            run_poller(settings, pg_sessionmaker, {CLUSTER: slurm_adapter}, stop, holder="standby")
        )
        await asyncio.sleep(2 * interval)
        assert await lease_holder(pg_sessionmaker) == holder
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
        killed_at = asyncio.get_running_loop().time()
        await wait_for_holder(pg_sessionmaker, lambda h: h == "standby", timeout=4 * interval)
        assert asyncio.get_running_loop().time() - killed_at <= 2 * interval
    finally:
        if first.poll() is None:
            first.kill()
            first.wait(timeout=10)
        stop.set()
        if standby_task is not None:
            await standby_task
