"""Table tests for the pure reconcile step of a poll cycle."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.poller.reconcile import Grace, TrackedJob, accounting_ids, reconcile, stale_submissions
from app.poller.rules import MISSING, NO_SLURM_JOB
from app.scheduler.slurm.parsing import split_array_id
from app.scheduler.states import JobState
from app.scheduler.types import JobInfo

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
GRACE = Grace(
    submit=timedelta(seconds=30),
    missing=timedelta(minutes=5),
    accounting_lag=timedelta(seconds=30),
)


def job(
    state: str, slurm_id: str | None = "100", *, age: float = 60, **fields: object
) -> TrackedJob:
    values: dict[str, object] = {
        "id": 1,
        "uuid": "u-1",
        "state": state,
        "slurm_job_id": slurm_id,
        "created_at": NOW - timedelta(seconds=age),
        "last_seen_at": NOW - timedelta(seconds=5),
    }
    values.update(fields)
    return TrackedJob(**values)  # type: ignore[arg-type]


def info(job_id: str, state: JobState, **fields: object) -> JobInfo:
    array_id, task_id = split_array_id(job_id)
    values: dict[str, object] = {
        "job_id": job_id,
        "state": state,
        "native_state": state.name,
        "array_job_id": array_id,
        "array_task_id": task_id,
    }
    values.update(fields)
    return JobInfo(**values)  # type: ignore[arg-type]


ENDED_LONG_AGO = NOW - timedelta(minutes=2)

CASES = [
    # (scenario, db state, queue, accounting, expected state or None for "no change")
    ("pending_job_starts", "pending", [info("100", JobState.RUNNING)], [], "running"),
    (
        "running_job_left_queue_completed",
        "running",
        [],
        [info("100", JobState.COMPLETED)],
        "completed",
    ),
    (
        "accounting_beats_queue_for_terminal",
        "running",
        [info("100", JobState.COMPLETING)],
        [info("100", JobState.FAILED, exit_code=3)],
        "failed",
    ),
    (
        "terminal_queue_record_waits_for_accounting",
        "running",
        [info("100", JobState.COMPLETED, end_time=NOW)],
        [],
        None,
    ),
    (
        "terminal_queue_record_used_after_accounting_lag",
        "running",
        [info("100", JobState.TIMEOUT, end_time=ENDED_LONG_AGO)],
        [],
        "timeout",
    ),
    ("missing_everywhere_within_grace_keeps_state", "running", [], [], None),
    (
        "undetermined_retried_and_resolved",
        "undetermined",
        [],
        [info("100", JobState.CANCELLED)],
        "cancelled",
    ),
    (
        "unknown_slurm_state_is_undetermined_not_terminal",
        "running",
        [info("100", JobState.UNDETERMINED)],
        [],
        "undetermined",
    ),
    (
        "requeued_running_job_goes_back_to_pending",
        "running",
        [info("100", JobState.QUEUED)],
        [],
        "pending",
    ),
    (
        "held_job_is_held",
        "pending",
        [info("100", JobState.QUEUED_HELD, reason="JobHeldUser")],
        [],
        "held",
    ),
]


@pytest.mark.parametrize(
    ("db_state", "queue", "accounting", "expected"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_reconcile_single_job_table(
    db_state: str, queue: list[JobInfo], accounting: list[JobInfo], expected: str | None
) -> None:
    changes = reconcile([job(db_state)], queue, accounting, NOW, GRACE)
    state_changes = [t for t in changes if t.is_state_change]
    if expected is None:
        assert state_changes == []
    else:
        assert [(t.job_id, t.to_state) for t in state_changes] == [(1, expected)]


def test_terminal_row_never_regresses_to_running() -> None:
    changes = reconcile([job("completed")], [info("100", JobState.RUNNING)], [], NOW, GRACE)
    assert changes == []


def test_missing_job_becomes_undetermined_after_grace_never_completed() -> None:
    stale = job("running", last_seen_at=NOW - timedelta(minutes=6))
    [change] = reconcile([stale], [], [], NOW, GRACE)
    assert (change.to_state, change.reason) == ("undetermined", MISSING)


def test_failed_job_carries_exit_code_and_usage() -> None:
    record = info("100", JobState.FAILED, exit_code=3, max_rss_bytes=2048, total_cpu_seconds=1.6)
    [change] = reconcile([job("running")], [], [record], NOW, GRACE)
    assert change.changes["exit_code"] == 3
    assert change.changes["max_rss_bytes"] == 2048
    assert change.changes["total_cpu_seconds"] == 2


def test_unchanged_pending_job_is_not_rewritten() -> None:
    row = job("pending", reason="Priority")
    assert reconcile([row], [info("100", JobState.QUEUED, reason="Priority")], [], NOW, GRACE) == []


def test_pending_job_is_rewritten_when_slurm_first_estimates_its_start() -> None:
    row = job("pending", reason="Resources")
    estimate = NOW + timedelta(minutes=3)
    queue = [info("100", JobState.QUEUED, reason="Resources", start_time=estimate)]
    [change] = reconcile([row], queue, [], NOW, GRACE)
    assert (change.to_state, change.changes["expected_start_at"]) == ("pending", estimate)


def test_pending_job_with_the_same_estimate_is_not_rewritten() -> None:
    estimate = NOW + timedelta(minutes=3)
    row = job("pending", reason="Resources", expected_start_at=estimate)
    queue = [info("100", JobState.QUEUED, reason="Resources", start_time=estimate)]
    assert reconcile([row], queue, [], NOW, GRACE) == []


def test_young_submission_is_left_alone() -> None:
    assert reconcile([job("submitting", None, age=5)], [], [], NOW, GRACE) == []


def test_stale_submission_is_attached_by_uuid_in_comment() -> None:
    queue = [info("321", JobState.RUNNING, comment="u-1")]
    [change] = reconcile([job("submitting", None, age=40)], queue, [], NOW, GRACE)
    assert (change.to_state, change.changes["slurm_job_id"]) == ("running", "321")


def test_stale_submission_found_only_in_accounting_is_attached() -> None:
    records = [info("321", JobState.COMPLETED, comment="u-1", exit_code=0)]
    [change] = reconcile([job("submitting", None, age=400)], [], records, NOW, GRACE)
    assert (change.to_state, change.changes["slurm_job_id"]) == ("completed", "321")


def test_stale_submission_nobody_carries_becomes_submit_failed() -> None:
    [change] = reconcile([job("submitting", None, age=40)], [], [], NOW, GRACE)
    assert (change.to_state, change.reason) == ("submit_failed", NO_SLURM_JOB)


def test_stale_submissions_lists_only_rows_the_queue_cannot_explain() -> None:
    rows = [job("submitting", None, age=40), job("submitting", None, age=40, id=2, uuid="u-2")]
    queue = [info("5", JobState.QUEUED, comment="u-2")]
    assert [row.id for row in stale_submissions(rows, queue, NOW, GRACE)] == [1]


def test_accounting_is_asked_only_about_jobs_that_left_the_queue() -> None:
    rows = [
        job("running", "1", id=1),
        job("running", "2", id=2),
        job("running", "3", id=3),
        job("held", "9_4", id=4, array_parent_id=10),
    ]
    queue = [
        info("1", JobState.RUNNING),
        info("2", JobState.COMPLETED),
        info("9_[0-9999]", JobState.QUEUED_HELD),
    ]
    assert accounting_ids(rows, queue) == ["2", "3"]


def parent(state: str = "pending") -> TrackedJob:
    return job(state, "12", id=10, is_array_parent=True)


def test_array_tasks_get_rows_as_slurm_creates_them() -> None:
    queue = [info("12_1", JobState.RUNNING), info("12_[2-5]", JobState.QUEUED)]
    changes = reconcile([parent()], queue, [], NOW, GRACE)
    created = [t for t in changes if t.job_id is None]
    assert [(t.parent_job_id, t.changes["slurm_job_id"]) for t in created] == [(10, "12_1")]
    assert [t.to_state for t in changes if t.job_id == 10] == ["running"]


def test_pending_array_record_keeps_parent_active_when_tasks_ended() -> None:
    queue = [
        info("12_1", JobState.COMPLETED, end_time=ENDED_LONG_AGO),
        info("12_[2-5]", JobState.QUEUED),
    ]
    task = job("completed", "12_1", id=11, array_parent_id=10)
    changes = reconcile([parent("running"), task], queue, [], NOW, GRACE)
    assert [t.to_state for t in changes if t.job_id == 10] == ["pending"]


def test_array_parent_ends_with_the_most_telling_task_state() -> None:
    started = ENDED_LONG_AGO - timedelta(minutes=3)
    records = [
        info("12_1", JobState.COMPLETED, exit_code=0, start_time=started, end_time=started),
        info("12_2", JobState.FAILED, exit_code=2, end_time=started + timedelta(seconds=90)),
    ]
    tasks = [
        job("running", "12_1", id=11, array_parent_id=10),
        job("running", "12_2", id=12, array_parent_id=10),
    ]
    changes = reconcile([parent("running"), *tasks], [], records, NOW, GRACE)
    by_id = {t.job_id: t for t in changes}
    assert (by_id[10].to_state, by_id[10].changes["exit_code"]) == ("failed", 2)
    assert by_id[10].changes["elapsed_seconds"] == 90  # first start to last end
    assert (by_id[11].to_state, by_id[12].to_state) == ("completed", "failed")


def test_held_task_covered_by_pending_record_is_not_missing() -> None:
    task = job("held", "12_7", id=11, array_parent_id=10, last_seen_at=NOW - timedelta(hours=1))
    queue = [info("12_[0-9999]", JobState.QUEUED_HELD, reason="JobHeldUser")]
    [change] = reconcile([task], queue, [], NOW, GRACE)
    assert (change.to_state, change.is_state_change) == ("held", False)


def test_finished_task_still_listed_by_slurm_is_not_created_again() -> None:
    task = job("completed", "12_1", id=11, array_parent_id=10)
    queue = [info("12_1", JobState.COMPLETED, end_time=NOW), info("12_2", JobState.RUNNING)]
    changes = reconcile([parent("running"), task], queue, [], NOW, GRACE)
    assert [t.changes["slurm_job_id"] for t in changes if t.job_id is None] == ["12_2"]


def test_finished_rows_are_never_sent_to_accounting() -> None:
    assert accounting_ids([job("completed", "12_1", id=11, array_parent_id=10)], []) == []


def test_parent_waits_for_accounting_to_confirm_a_task_that_just_ended() -> None:
    queue = [info("12_0", JobState.COMPLETED, end_time=NOW)]
    task = job("running", "12_0", id=11, array_parent_id=10)
    changes = reconcile([parent("running"), task], queue, [], NOW, GRACE)
    assert [t.to_state for t in changes if t.job_id == 10] == ["running"]
    confirmed = [info("12_0", JobState.COMPLETED, exit_code=0)]
    changes = reconcile([parent("running"), task], queue, confirmed, NOW, GRACE)
    assert {t.job_id: t.to_state for t in changes} == {10: "completed", 11: "completed"}


def test_an_array_takes_its_submission_time_and_the_partition_slurm_chose_from_its_tasks() -> None:
    submitted = NOW - timedelta(minutes=1)
    queue = [
        info("12_1", JobState.RUNNING, submit_time=submitted, partition="debug"),
        info("12_[2-5]", JobState.QUEUED, submit_time=submitted, partition="debug"),
    ]
    changes = {t.job_id: t for t in reconcile([parent()], queue, [], NOW, GRACE)}
    assert changes[10].changes["submitted_at"] == submitted
    assert changes[10].changes["chosen_partition"] == "debug"
    created = changes[None].changes
    assert (created["chosen_partition"], created["submitted_at"]) == ("debug", submitted)


def test_a_pending_job_that_may_run_in_several_partitions_has_not_been_given_one() -> None:
    queue = [info("100", JobState.RUNNING, partition="debug")]
    [started] = reconcile([job("pending")], queue, [], NOW, GRACE)
    [undecided] = reconcile(
        [job("pending")],
        [info("100", JobState.QUEUED, partition="a,b", reason="Priority")],
        [],
        NOW,
        GRACE,
    )
    assert started.changes["chosen_partition"] == "debug"
    assert "chosen_partition" not in undecided.changes


def test_a_job_that_just_ended_takes_its_partition_from_the_queue_until_accounting_has_it() -> None:
    queue = [info("100", JobState.COMPLETED, partition="debug", end_time=NOW)]
    accounting = [info("100", JobState.COMPLETED, exit_code=0, end_time=NOW)]
    [ended] = reconcile([job("pending")], queue, accounting, NOW, GRACE)
    assert (ended.to_state, ended.changes["chosen_partition"]) == ("completed", "debug")


def test_a_task_first_seen_ended_keeps_the_log_path_the_queue_gave_it() -> None:
    # The poller's first look at an array whose task 1 has already ended: accounting's record
    # (which never has log paths) replaces the queue's, which holds the task's own %j.
    out = "/home/carol/hand-array_906.out"
    queue = [
        info("12_1", JobState.COMPLETED, end_time=NOW, raw_job_id="906", stdout_path=out),
        info("12_2", JobState.RUNNING, raw_job_id="907", stdout_path="/home/carol/x_907.out"),
    ]
    accounting = [info("12_1", JobState.COMPLETED, exit_code=0, end_time=NOW, raw_job_id="906")]
    changes = reconcile([parent("running")], queue, accounting, NOW, GRACE)
    created = {t.changes["slurm_job_id"]: t for t in changes if t.job_id is None}
    assert created["12_1"].to_state == "completed"
    assert created["12_1"].changes["stdout_path"] == out


def test_a_pbs_task_covered_by_its_arrays_pending_record_is_not_missing() -> None:
    task = job(
        "held", "12[7].pbs-head", id=11, array_parent_id=10, last_seen_at=NOW - timedelta(hours=1)
    )
    pending = info(
        "12[].pbs-head",
        JobState.QUEUED_HELD,
        array_job_id="12[].pbs-head",
        array_task_id="[1-9]",
        reason="Held by the user",
    )
    [change] = reconcile([task], [pending], [], NOW, GRACE)
    assert (change.to_state, change.is_state_change) == ("held", False)
