"""Reservations as each Slurm version prints them (recorded on the dev clusters)."""

from __future__ import annotations

from datetime import UTC, datetime

from app.scheduler.slurm.reservations import parse_reservations, reservations_argv
from tests.unit.scheduler.conftest import Recorded


def test_reservations_are_listed_one_per_line_in_utc() -> None:
    assert reservations_argv() == [
        "env", "TZ=UTC", "scontrol", "show", "reservation", "--oneliner",
    ]  # fmt: skip


def test_every_version_reads_a_maintenance_window_and_an_ordinary_reservation(
    recorded: Recorded,
) -> None:
    maint, training = parse_reservations(recorded.text("scontrol-reservations.txt"))
    assert maint.name == "fixture_maint"
    assert maint.is_maintenance
    assert {"MAINT", "IGNORE_JOBS", "ALL_NODES"} <= maint.flags
    assert maint.start.tzinfo is UTC and maint.end is not None
    assert (maint.end - maint.start).total_seconds() == 6 * 3600
    assert maint.nodes == "vm"
    assert maint.partition is None
    assert maint.state == "INACTIVE"
    assert maint.native["Duration"] == "06:00:00"
    assert training.name == "fixture_training"
    assert not training.is_maintenance


def test_no_reservations_is_an_empty_list(recorded: Recorded) -> None:
    text = recorded.text("scontrol-reservations-none.txt")
    assert text.strip() == "No reservations in the system"
    assert parse_reservations(text) == []


def test_a_comment_with_spaces_and_an_unknown_end_are_kept_apart() -> None:
    line = (
        "ReservationName=m StartTime=2026-12-01T08:00:00 EndTime=Unknown Duration=UNLIMITED "
        "Nodes=n[1-4] PartitionName=gpu Flags=MAINT Comment=kernel update on gpu nodes "
        "State=ACTIVE"
    )
    [found] = parse_reservations(line)
    assert found.start == datetime(2026, 12, 1, 8, tzinfo=UTC)
    assert found.end is None
    assert found.partition == "gpu"
    assert found.native["Comment"] == "kernel update on gpu nodes"
    assert found.state == "ACTIVE"


def test_a_line_without_a_start_is_skipped() -> None:
    assert parse_reservations("ReservationName=x StartTime=(null)\nsomething else\n") == []
