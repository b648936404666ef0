"""Reservations as every adapter reads them from the real clusters (both transports)."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest

from app.models.base import utc_now
from app.scheduler.base import SchedulerAdapter
from tests.slurm_versions import run_on

pytestmark = pytest.mark.slurm


async def test_a_maint_reservation_is_read_with_its_window_and_flags(
    adapter: SchedulerAdapter, slurm_version: str
) -> None:
    name = f"contract_maint_{uuid.uuid4().hex[:8]}"
    argv = [
        "scontrol", "create", "reservation", f"reservationname={name}",
        "starttime=now+40days", "duration=02:00:00", "nodes=ALL", "users=root",
        "flags=maint,ignore_jobs",
    ]  # fmt: skip
    made = run_on(slurm_version, argv)
    assert made.returncode == 0, made.stderr
    try:
        found = {r.name: r for r in await adapter.reservations()}
    finally:
        run_on(slurm_version, ["scontrol", "delete", f"reservation={name}"])
    reservation = found[name]
    assert reservation.is_maintenance and "IGNORE_JOBS" in reservation.flags
    ahead = reservation.start - utc_now()
    assert timedelta(days=39, hours=23) < ahead <= timedelta(days=40)
    assert reservation.end == reservation.start + timedelta(hours=2)
    assert reservation.native["ReservationName"] == name
    assert name not in {r.name for r in await adapter.reservations()}
