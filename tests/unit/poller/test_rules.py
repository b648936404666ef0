"""Table tests for the column values a scheduler record sets on a job row."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.poller.rules import observed_changes
from app.scheduler.states import JobState
from app.scheduler.types import JobInfo

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
EARLIER = NOW - timedelta(minutes=3)
LATER = NOW + timedelta(hours=2)

START_CASES = [
    # (scenario, state, StartTime Slurm reports, started_at the row gets or None for "unset")
    ("pending_with_expected_start", JobState.QUEUED, LATER, None),
    ("pending_with_past_estimate", JobState.QUEUED, EARLIER, None),
    ("held_with_expected_start", JobState.QUEUED_HELD, LATER, None),
    ("running", JobState.RUNNING, EARLIER, EARLIER),
    ("completing", JobState.COMPLETING, EARLIER, EARLIER),
    ("suspended", JobState.SUSPENDED, EARLIER, EARLIER),
    ("completed_from_accounting", JobState.COMPLETED, EARLIER, EARLIER),
    ("cancelled_with_future_start", JobState.CANCELLED, LATER, None),
    ("running_without_start", JobState.RUNNING, None, None),
]


@pytest.mark.parametrize(
    ("state", "start", "expected"),
    [case[1:] for case in START_CASES],
    ids=[case[0] for case in START_CASES],
)
def test_started_at_is_only_set_once_the_job_has_started(
    state: JobState, start: datetime | None, expected: datetime | None
) -> None:
    record = JobInfo(job_id="100", state=state, native_state=state.name, start_time=start)
    assert observed_changes(record, NOW).get("started_at") == expected


ESTIMATE_CASES = [
    # (scenario, state, StartTime Slurm reports, expected_start_at the row gets)
    ("pending_with_expected_start", JobState.QUEUED, LATER, LATER),
    ("pending_with_past_estimate", JobState.QUEUED, EARLIER, None),
    ("pending_without_estimate", JobState.QUEUED, None, None),
    ("held_with_expected_start", JobState.QUEUED_HELD, LATER, None),
    ("running", JobState.RUNNING, EARLIER, None),
    ("cancelled_with_future_start", JobState.CANCELLED, LATER, None),
]


@pytest.mark.parametrize(
    ("state", "start", "expected"),
    [case[1:] for case in ESTIMATE_CASES],
    ids=[case[0] for case in ESTIMATE_CASES],
)
def test_expected_start_is_kept_while_it_is_a_forecast_and_cleared_after(
    state: JobState, start: datetime | None, expected: datetime | None
) -> None:
    record = JobInfo(job_id="100", state=state, native_state=state.name, start_time=start)
    changes = observed_changes(record, NOW)
    assert "expected_start_at" in changes  # written as None too, so a stale estimate goes
    assert changes["expected_start_at"] == expected
