"""The names of the portal's job states, shared by the database's check constraint, the API's
schema (an enum client generators turn into a type) and the CLI's exit statuses."""

from __future__ import annotations

from enum import StrEnum


class JobStateName(StrEnum):
    """A portal job state, as stored and as the API and CLI say it."""

    SUBMITTING = "submitting"
    SUBMIT_FAILED = "submit_failed"
    PENDING = "pending"
    HELD = "held"
    RUNNING = "running"
    SUSPENDED = "suspended"
    COMPLETING = "completing"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    TIMEOUT = "timeout"
    OUT_OF_MEMORY = "out_of_memory"
    NODE_FAIL = "node_fail"
    PREEMPTED = "preempted"
    BOOT_FAIL = "boot_fail"
    DEADLINE = "deadline"
    UNDETERMINED = "undetermined"
