"""Which poll cycles also report partitions or ingest usage."""

from __future__ import annotations

from app.poller.runner import ExtraWorkSchedule


def run_cycles(schedule: ExtraWorkSchedule, moments: list[float]) -> list[tuple[bool, bool]]:
    done = []
    for moment in moments:
        work = schedule.due(moment)
        schedule.ran(work, moment)
        done.append((work.partitions, work.usage))
    return done


def test_partitions_every_k_cycles_and_usage_every_m_seconds_from_the_first_cycle() -> None:
    schedule = ExtraWorkSchedule(partitions_every=3, usage_every=25.0)
    moments = [0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0]
    assert run_cycles(schedule, moments) == [
        (True, True),
        (False, False),
        (False, False),
        (True, True),
        (False, False),
        (False, False),
        (True, True),
    ]


def test_usage_ingestion_can_be_turned_off() -> None:
    schedule = ExtraWorkSchedule(partitions_every=1, usage_every=0)
    assert run_cycles(schedule, [0.0, 1000.0]) == [(True, False), (True, False)]


def test_reservations_fall_half_a_period_after_the_partitions() -> None:
    schedule = ExtraWorkSchedule(partitions_every=4, usage_every=0, reservations_every=4)
    done = []
    for moment in range(9):
        work = schedule.due(float(moment))
        schedule.ran(work, float(moment))
        done.append((work.partitions, work.reservations))
    assert [i for i, (p, _) in enumerate(done) if p] == [0, 4, 8]
    assert [i for i, (_, r) in enumerate(done) if r] == [2, 6]


def test_reservations_can_be_read_on_every_cycle() -> None:
    schedule = ExtraWorkSchedule(reservations_every=1)
    assert all(schedule.due(float(i)).reservations for i in range(3))


def test_nodes_are_read_every_k_cycles_from_the_first() -> None:
    schedule = ExtraWorkSchedule(partitions_every=6, usage_every=0, nodes_every=2)
    read = []
    for moment in range(5):
        work = schedule.due(float(moment))
        schedule.ran(work, float(moment))
        read.append(work.nodes)
    assert read == [True, False, True, False, True]


def test_idle_sessions_are_checked_every_k_cycles_the_first_check_after_k_cycles() -> None:
    schedule = ExtraWorkSchedule(usage_every=0, idle_every=3)
    checked = []
    for moment in range(7):
        work = schedule.due(float(moment))
        schedule.ran(work, float(moment))
        checked.append(work.idle)
    assert [i for i, idle in enumerate(checked) if idle] == [2, 5]
    every = ExtraWorkSchedule(idle_every=1)
    assert all(every.due(float(i)).idle for i in range(3))
