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


NODE_CASES = [
    # (scenario, state, StartTime, the node list Slurm shows, node_list the row gets)
    ("running_on_one_node", JobState.RUNNING, EARLIER, "vm", "vm"),
    ("running_on_a_range", JobState.RUNNING, EARLIER, "c[1-2]", "c[1-2]"),
    ("ended_from_accounting", JobState.COMPLETED, EARLIER, "c7", "c7"),
    ("pending_shows_none", JobState.QUEUED, LATER, "", None),
    ("accounting_before_start", JobState.CANCELLED, None, "None assigned", None),
    ("rest_null", JobState.RUNNING, EARLIER, "(null)", None),
    ("longer_than_the_column", JobState.RUNNING, EARLIER, "c" * 300, None),
]


@pytest.mark.parametrize(
    ("state", "start", "nodes", "expected"),
    [case[1:] for case in NODE_CASES],
    ids=[case[0] for case in NODE_CASES],
)
def test_node_list_is_kept_once_the_job_has_nodes(
    state: JobState, start: datetime | None, nodes: str, expected: str | None
) -> None:
    record = JobInfo(
        job_id="100", state=state, native_state=state.name, start_time=start, nodes=nodes
    )
    assert observed_changes(record, NOW).get("node_list") == expected
