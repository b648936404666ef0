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
