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


def test_only_plain_jobs_of_mapped_users_and_accounts_nobody_tracks_are_taken() -> None:
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
    ]
