"""The portal's job states: one enum, stored in the database (its check constraint), given by
the API's schema (an enum client generators turn into a type) and the CLI's exit statuses.

It is the scheduler library's JobState (app/scheduler/states.py) under the portal's names:
every scheduler state is a portal state of the same value, except that a queued job is
``pending`` and a held one ``held``; two states exist only in the portal, before the
scheduler has taken the job (``submitting``) and when it refused it (``submit_failed``).
app/jobs/states.py maps one onto the other and says what each state allows.
"""

from __future__ import annotations

from enum import StrEnum

from app.scheduler.states import JobState


class JobStateName(StrEnum):
    """A portal job state, as stored and as the API and CLI say it."""

    SUBMITTING = "submitting"
    SUBMIT_FAILED = "submit_failed"
    PENDING = "pending"  # JobState.QUEUED
    HELD = "held"  # JobState.QUEUED_HELD
    RUNNING = JobState.RUNNING.value
    SUSPENDED = JobState.SUSPENDED.value
    COMPLETING = JobState.COMPLETING.value
    COMPLETED = JobState.COMPLETED.value
    FAILED = JobState.FAILED.value
    CANCELLED = JobState.CANCELLED.value
    TIMEOUT = JobState.TIMEOUT.value
    OUT_OF_MEMORY = JobState.OUT_OF_MEMORY.value
    NODE_FAIL = JobState.NODE_FAIL.value
    PREEMPTED = JobState.PREEMPTED.value
    BOOT_FAIL = JobState.BOOT_FAIL.value
    DEADLINE = JobState.DEADLINE.value
    UNDETERMINED = JobState.UNDETERMINED.value


RENAMED: dict[JobState, JobStateName] = {
    JobState.QUEUED: JobStateName.PENDING,
    JobState.QUEUED_HELD: JobStateName.HELD,
}
"""The scheduler states the portal calls by another name; the others keep theirs."""
