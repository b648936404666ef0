"""Maintenance reservations read by the poller become announcements, one call a cycle."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models.announcements import Announcement
from app.poller.cycle import CycleWork, poll_cluster_once
from app.scheduler.fake import FakeScheduler
from app.scheduler.types import Reservation

pytestmark = pytest.mark.sqlite

CLUSTER = "testcluster"
NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)


def _maint(name: str, hours: int, flags: frozenset[str] = frozenset({"MAINT"})) -> Reservation:
    start = NOW + timedelta(hours=hours)
    return Reservation(name, start, start + timedelta(hours=6), flags)


async def _rows(sessionmaker: async_sessionmaker[AsyncSession]) -> list[Announcement]:
    async with sessionmaker() as session:
        return list(await session.scalars(select(Announcement).order_by(Announcement.id)))


async def test_a_maint_reservation_becomes_an_announcement_until_its_end_in_one_call(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    fake = FakeScheduler()
    fake.reservation_list = [_maint("kernel", 30), _maint("training", 5, frozenset())]
    work = CycleWork(reservations=True)
    result = await poll_cluster_once(sessionmaker, CLUSTER, fake, now=NOW, work=work)
    assert (result.calls, sorted(fake.calls)) == (2, ["queue", "reservations"])
    [row] = await _rows(sessionmaker)
    assert (row.source, row.cluster, row.reservation_name) == ("maintenance", CLUSTER, "kernel")
    assert row.window_start == NOW + timedelta(hours=30)
    assert row.shown_until == row.window_end == NOW + timedelta(hours=36)


async def test_a_moved_window_is_updated_in_place_and_a_deleted_one_goes(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    fake = FakeScheduler()
    fake.reservation_list = [_maint("kernel", 30)]
    work = CycleWork(reservations=True)
    await poll_cluster_once(sessionmaker, CLUSTER, fake, now=NOW, work=work)
    [first] = await _rows(sessionmaker)
    fake.reservation_list = [_maint("kernel", 40)]
    await poll_cluster_once(sessionmaker, CLUSTER, fake, now=NOW, work=work)
    [moved] = await _rows(sessionmaker)
    assert moved.id == first.id and moved.window_start == NOW + timedelta(hours=40)
    fake.reservation_list = []
    await poll_cluster_once(sessionmaker, CLUSTER, fake, now=NOW, work=work)
    assert await _rows(sessionmaker) == []


async def test_cycles_without_reservations_work_leave_the_announcements_alone(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    fake = FakeScheduler()
    fake.reservation_list = [_maint("kernel", 30)]
    await poll_cluster_once(sessionmaker, CLUSTER, fake, now=NOW, work=CycleWork(reservations=True))
    fake.reservation_list = []
    result = await poll_cluster_once(sessionmaker, CLUSTER, fake, now=NOW)
    assert result.calls == 1
    assert len(await _rows(sessionmaker)) == 1
