"""Maintenance reservations read from a cluster, kept as announcements (one short write).

A reservation with Slurm's MAINT flag becomes an announcement shown from when the poller
first sees it until the window ends; one that changed is updated in place, one that is
gone (deleted, or over) is removed.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.announcements import repository
from app.db import unit_of_work
from app.models.announcements import Announcement
from app.scheduler.types import Reservation


def _windows(reservations: Sequence[Reservation], now: datetime) -> dict[str, Reservation]:
    return {r.name: r for r in reservations if r.is_maintenance and (r.end is None or r.end > now)}


def _update(row: Announcement, reservation: Reservation) -> None:
    row.window_start = reservation.start
    row.window_end = reservation.end
    row.shown_until = reservation.end
    row.partition = reservation.partition


async def record_maintenance(
    sessionmaker: async_sessionmaker[AsyncSession],
    cluster: str,
    reservations: Sequence[Reservation],
    now: datetime,
) -> None:
    """Make the cluster's maintenance announcements match what the scheduler holds."""
    windows = _windows(reservations, now)
    async with unit_of_work(sessionmaker) as session:
        rows = {
            row.reservation_name: row for row in await repository.list_maintenance(session, cluster)
        }
        for name, reservation in windows.items():
            row = rows.get(name)
            if row is None:
                row = Announcement(
                    source="maintenance",
                    cluster=cluster,
                    reservation_name=name,
                    shown_from=now,
                    is_dismissible=True,
                )
                session.add(row)
            _update(row, reservation)
        await repository.delete_ids(
            session, [row.id for name, row in rows.items() if name not in windows]
        )
