"""A maintenance reservation made on the real cluster with scontrol becomes an announcement
after one poll, and a job longer than the time left before it is warned of it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta

import pytest
from sqlalchemy import select

from app.announcements import service as announcements
from app.i18n import use_locale
from app.models.announcements import Announcement
from app.models.base import utc_now
from app.poller.cycle import CycleWork, poll_cluster_once
from tests.integration.poller.conftest import Portal
from tests.slurm_versions import run_on

pytestmark = pytest.mark.slurm

HOURS_AHEAD = 30


@pytest.fixture
def maintenance(portal: Portal) -> Iterator[str]:
    """A MAINT reservation on every node, 30 hours from now, removed afterwards.

    IGNORE_JOBS lets it be made while other tests' jobs run; a window 30 hours away
    delays only jobs asking for more than that."""
    name = f"portal_maint_{uuid.uuid4().hex[:8]}"
    argv = [
        "scontrol", "create", "reservation", f"reservationname={name}",
        f"starttime=now+{HOURS_AHEAD}hours", "duration=06:00:00", "nodes=ALL", "users=root",
        "flags=maint,ignore_jobs",
    ]  # fmt: skip
    made = run_on(portal.version, argv)
    assert made.returncode == 0, made.stderr
    try:
        yield name
    finally:
        run_on(portal.version, ["scontrol", "delete", f"reservation={name}"])


async def _maintenance_rows(portal: Portal) -> list[Announcement]:
    async with portal.sessionmaker() as session:
        query = select(Announcement).where(Announcement.cluster == portal.cluster)
        return list(await session.scalars(query))


async def test_a_maint_reservation_is_announced_and_a_two_day_job_is_warned(
    portal: Portal, maintenance: str
) -> None:
    work = CycleWork(reservations=True)
    result = await poll_cluster_once(portal.sessionmaker, portal.cluster, portal.adapter, work=work)
    assert result.is_ok, result.error
    [row] = [r for r in await _maintenance_rows(portal) if r.reservation_name == maintenance]
    assert row.window_start is not None and row.window_end is not None
    ahead = row.window_start - utc_now()
    assert timedelta(hours=HOURS_AHEAD - 1) < ahead <= timedelta(hours=HOURS_AHEAD)
    assert row.window_end - row.window_start == timedelta(hours=6)
    async with portal.sessionmaker() as session:
        shown = await announcements.shown(session, portal.alice)
        clash = await announcements.maintenance_clash(session, portal.cluster, 2 * 24 * 60, "long")
        fits = await announcements.maintenance_clash(session, portal.cluster, 60, "long")
    [announced] = [a for a in shown if a.id == row.id]
    assert announced.text.startswith(f"{portal.cluster} stops for maintenance from ")
    assert clash is not None and fits is None
    with use_locale("en"):
        assert clash.message().startswith(
            f"This job asks for 2 days; {portal.cluster} stops for maintenance in 29 hours"
        )
    run_on(portal.version, ["scontrol", "delete", f"reservation={maintenance}"])
    await poll_cluster_once(portal.sessionmaker, portal.cluster, portal.adapter, work=work)
    assert maintenance not in {r.reservation_name for r in await _maintenance_rows(portal)}
