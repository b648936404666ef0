"""PBS reservations read from ``pbs_rstat -f`` as recorded on the dev cluster (OpenPBS 23.06):
a maintenance reservation (``pbs_rsub --hosts``) and a user's named one."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from app.scheduler.pbs.reservations import parse_reservations, rstat_argv

RECORDED = Path(__file__).resolve().parents[3] / "fixtures" / "pbs" / "23.06"


def test_rstat_is_asked_in_full_with_times_in_utc() -> None:
    assert rstat_argv() == ["env", "TZ=UTC", "pbs_rstat", "-f"]


def test_a_maintenance_reservation_and_a_named_one_are_read() -> None:
    maintenance, teaching = parse_reservations((RECORDED / "pbs_rstat-f.txt").read_text())

    assert (maintenance.name, maintenance.is_maintenance, maintenance.nodes) == (
        "M30.pbshead",
        True,
        "pbshead",
    )
    assert maintenance.start == datetime(2026, 12, 28, 0, 5, tzinfo=UTC)
    assert maintenance.end == datetime(2026, 12, 28, 2, 5, tzinfo=UTC)
    assert (maintenance.state, maintenance.partition) == ("RESV_CONFIRMED", None)
    assert (teaching.name, teaching.is_maintenance) == ("teaching", False)
    assert teaching.native["Authorized_Users"] == "alice,alice@pbshead,carol"


def test_nothing_held_is_no_reservation() -> None:
    assert parse_reservations("") == []


def test_a_reservation_without_a_start_is_left_out() -> None:
    text = "Resv ID: R9.pbshead\nReserve_Name = NULL\nreserve_state = RESV_UNCONFIRMED\n\n"
    assert parse_reservations(text) == []


def test_hosts_are_named_once_each() -> None:
    text = (
        "Resv ID: M4.head\nreserve_start = Mon Dec 28 00:05:00 2026\n"
        "resv_nodes = (n1:ncpus=2)+(n2:ncpus=1:mem=1gb)+(n1:ncpus=1)\n\n"
    )
    [found] = parse_reservations(text)
    assert (found.nodes, found.end) == ("n1,n2", None)
