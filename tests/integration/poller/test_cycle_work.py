"""Extra work a poll cycle does on request: partitions and usage, each one counted call."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models.clusters import ClusterStatus
from app.models.usage import UsageIngestMark
from app.poller.cycle import CycleWork, poll_cluster_once
from app.scheduler.errors import SchedulerUnavailable
from app.scheduler.fake import FakeScheduler
from app.scheduler.types import PartitionInfo

# The portability tier: these also run on SQLite (ADR 0018).
pytestmark = pytest.mark.sqlite

CLUSTER = "testcluster"


async def _status(sessionmaker: async_sessionmaker[AsyncSession]) -> ClusterStatus:
    async with sessionmaker() as session:
        row = await session.get(ClusterStatus, CLUSTER)
    assert row is not None
    return row


async def test_plain_cycle_makes_one_queue_call_and_reports_no_partitions(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    fake = FakeScheduler()
    result = await poll_cluster_once(sessionmaker, CLUSTER, fake)
    status = await _status(sessionmaker)
    assert (result.calls, status.calls_last_cycle, fake.calls) == (1, 1, ["queue"])
    assert (status.partitions, status.partitions_at) == (None, None)


async def test_partitions_and_usage_cycle_counts_each_call_and_stores_the_partitions(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    fake = FakeScheduler()
    now = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
    work = CycleWork(partitions=True, usage=True)
    result = await poll_cluster_once(sessionmaker, CLUSTER, fake, now=now, work=work)
    status = await _status(sessionmaker)
    # The usage slot reads the allocation limits with it (ADR 0021).
    assert sorted(fake.calls) == ["account_limits", "accounting", "partitions", "queue"]
    assert (result.calls, status.calls_last_cycle, result.is_ok) == (4, 4, True)
    names = [p.name for p in await fake.partitions()]
    assert [p["name"] for p in status.partitions or []] == names
    assert status.partitions_at == now
    async with sessionmaker() as session:
        mark = await session.scalar(select(UsageIngestMark))
    assert mark is not None and mark.cluster == CLUSTER


async def test_a_failing_partitions_call_fails_the_cycle_and_keeps_the_last_report(
    sessionmaker: async_sessionmaker[AsyncSession], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeScheduler()
    await poll_cluster_once(sessionmaker, CLUSTER, fake, work=CycleWork(partitions=True))
    reported = (await _status(sessionmaker)).partitions

    async def unreachable() -> list[PartitionInfo]:
        raise SchedulerUnavailable("sinfo timed out")

    monkeypatch.setattr(fake, "partitions", unreachable)
    result = await poll_cluster_once(sessionmaker, CLUSTER, fake, work=CycleWork(partitions=True))
    status = await _status(sessionmaker)
    assert not result.is_ok and status.consecutive_failures == 1
    assert status.partitions == reported
