"""Which queue records are a mapped user's jobs the portal has not seen."""

from __future__ import annotations

from datetime import UTC, datetime

from app.poller.outside import Directory, outside_jobs
from app.poller.rules import TrackedJob
from app.scheduler.states import JobState
from app.scheduler.types import JobInfo

DIRECTORY = Directory({"alice": 1}, {"physics": 10})
TRACKED = [
    TrackedJob(5, "uuid-5", "running", "500", datetime(2026, 1, 1, tzinfo=UTC)),
    TrackedJob(6, "uuid-6", "submitting", None, datetime(2026, 1, 1, tzinfo=UTC)),
]


def record(job_id: str, state: JobState = JobState.RUNNING, **fields: object) -> JobInfo:
    values: dict[str, object] = {"user": "alice", "account": "physics"} | fields
    return JobInfo(job_id=job_id, state=state, native_state=state.name, **values)  # type: ignore[arg-type]


def test_only_jobs_of_mapped_users_and_accounts_nobody_tracks_are_taken() -> None:
    queue = [
        record("100"),
        record("101", JobState.QUEUED),
        record("500"),  # tracked by its id
        record("502", comment="uuid-6"),  # a portal submission not yet attached
        record("503", JobState.COMPLETED),  # ended between cycles: still worth recording
        record("504_1", array_job_id="504", array_task_id="1"),
        record("505", user="zoe"),
        record("506", account="chemistry"),
    ]
    found = outside_jobs(queue, TRACKED, DIRECTORY)
    assert [(o.info.job_id, o.owner_user_id, o.project_id) for o in found] == [
        ("100", 1, 10),
        ("101", 1, 10),
        ("503", 1, 10),
        ("504", 1, 10),  # an array, as one
    ]


def task(
    array_id: str, index: str, state: JobState = JobState.RUNNING, **fields: object
) -> JobInfo:
    return record(
        f"{array_id}_{index}", state, array_job_id=array_id, array_task_id=index, **fields
    )


def test_an_array_is_taken_once_with_the_task_set_the_queue_shows() -> None:
    queue = [
        task("700", "1", raw_job_id="701", stdout_path="/home/alice/s_701.out"),
        task("700", "2", raw_job_id="702"),
        task("700", "4", JobState.FAILED, raw_job_id="704", exit_code=1),
        task("700", "[5-9,12%2]", JobState.QUEUED, raw_job_id="700"),
        task("800", "1", comment="uuid-6"),  # a portal array not yet attached
        task("500", "3"),  # a task of a tracked array
    ]
    [array] = outside_jobs(queue, TRACKED, DIRECTORY)
    assert (array.info.job_id, array.info.raw_job_id, array.info.array_job_id) == (
        "700",
        "700",
        None,
    )
    assert array.array_spec == "1-2,4,5-9,12%2"
    assert len(array.array_records) == 4
    assert array.info.exit_code is None


def test_a_huge_task_set_is_given_by_its_bounds() -> None:
    pieces = ",".join(str(n) for n in range(0, 4000, 3))
    queue = [task("900", "0"), task("900", f"[{pieces}]", JobState.QUEUED)]
    [array] = outside_jobs(queue, TRACKED, DIRECTORY)
    assert array.array_spec == "0-3999"
