"""Scheduler job states and the map from every Slurm state name onto them."""

from __future__ import annotations

import enum


class JobState(enum.StrEnum):
    """A job's state as the scheduler sees it (portal-only states live elsewhere)."""

    UNDETERMINED = "undetermined"
    QUEUED = "queued"
    QUEUED_HELD = "queued_held"
    RUNNING = "running"
    SUSPENDED = "suspended"
    COMPLETING = "completing"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    TIMEOUT = "timeout"
    OUT_OF_MEMORY = "out_of_memory"
    NODE_FAIL = "node_fail"
    BOOT_FAIL = "boot_fail"
    DEADLINE = "deadline"
    PREEMPTED = "preempted"

    @property
    def is_terminal(self) -> bool:
        """True once the job can no longer change state."""
        return self in _TERMINAL

    @property
    def is_active(self) -> bool:
        """True while the job is known to be queued, running or winding down."""
        return self in _ACTIVE


_TERMINAL = frozenset(
    {
        JobState.COMPLETED,
        JobState.FAILED,
        JobState.CANCELLED,
        JobState.TIMEOUT,
        JobState.OUT_OF_MEMORY,
        JobState.NODE_FAIL,
        JobState.BOOT_FAIL,
        JobState.DEADLINE,
        JobState.PREEMPTED,
    }
)
_ACTIVE = frozenset(
    {
        JobState.QUEUED,
        JobState.QUEUED_HELD,
        JobState.RUNNING,
        JobState.SUSPENDED,
        JobState.COMPLETING,
    }
)

# Long name -> (short name, state). Requeue and resize states are transient: the job
# goes back to the queue, so they map to QUEUED rather than to anything terminal.
_SLURM_STATES: dict[str, tuple[str, JobState]] = {
    "PENDING": ("PD", JobState.QUEUED),
    "CONFIGURING": ("CF", JobState.QUEUED),
    "RUNNING": ("R", JobState.RUNNING),
    "COMPLETING": ("CG", JobState.COMPLETING),
    "SUSPENDED": ("S", JobState.SUSPENDED),
    "PREEMPTED": ("PR", JobState.PREEMPTED),
    "REQUEUED": ("RQ", JobState.QUEUED),
    "REQUEUE_FED": ("RF", JobState.QUEUED),
    "REQUEUE_HOLD": ("RH", JobState.QUEUED_HELD),
    "RESIZING": ("RS", JobState.RUNNING),
    "STOPPED": ("ST", JobState.SUSPENDED),
    "SIGNALING": ("SI", JobState.RUNNING),
    "STAGE_OUT": ("SO", JobState.COMPLETING),
    "RESV_DEL_HOLD": ("RD", JobState.QUEUED_HELD),
    "COMPLETED": ("CD", JobState.COMPLETED),
    "FAILED": ("F", JobState.FAILED),
    "CANCELLED": ("CA", JobState.CANCELLED),
    "TIMEOUT": ("TO", JobState.TIMEOUT),
    "OUT_OF_MEMORY": ("OOM", JobState.OUT_OF_MEMORY),
    "NODE_FAIL": ("NF", JobState.NODE_FAIL),
    "BOOT_FAIL": ("BF", JobState.BOOT_FAIL),
    "DEADLINE": ("DL", JobState.DEADLINE),
    "REVOKED": ("RV", JobState.CANCELLED),
    "SPECIAL_EXIT": ("SE", JobState.FAILED),
}

SLURM_STATE_MAP: dict[str, JobState] = {
    **{long: state for long, (_, state) in _SLURM_STATES.items()},
    **{short: state for short, state in _SLURM_STATES.values()},
}
"""Every Slurm state name, long and short, mapped onto a JobState."""

HOLD_REASONS = frozenset({"JobHeldUser", "JobHeldAdmin", "held"})
"""Pending reasons meaning the job will not start until released."""


def state_from_slurm(native: str, reason: str | None = None) -> JobState:
    """Map a Slurm state string onto a JobState.

    Accepts long and short names, sacct's ``CANCELLED by 1001`` and flag suffixes such as
    ``PENDING+`` or ``RUNNING,COMPLETING``. Unknown names give UNDETERMINED, never a
    terminal state. A pending job whose reason is a hold gives QUEUED_HELD.
    """
    token = native.strip().split(" ", 1)[0].split(",", 1)[0].rstrip("+").upper()
    state = SLURM_STATE_MAP.get(token, JobState.UNDETERMINED)
    if state is JobState.QUEUED and reason is not None and reason.strip() in HOLD_REASONS:
        return JobState.QUEUED_HELD
    return state
