"""Portal job states: the map from scheduler states and what each state allows."""

from __future__ import annotations

from app.scheduler.states import JobState

SUBMITTING = "submitting"
SUBMIT_FAILED = "submit_failed"
PENDING = "pending"
HELD = "held"
RUNNING = "running"
COMPLETING = "completing"
UNDETERMINED = "undetermined"

_FROM_SCHEDULER: dict[JobState, str] = {
    JobState.UNDETERMINED: UNDETERMINED,
    JobState.QUEUED: PENDING,
    JobState.QUEUED_HELD: HELD,
    JobState.RUNNING: RUNNING,
    JobState.SUSPENDED: "suspended",
    JobState.COMPLETING: "completing",
    JobState.COMPLETED: "completed",
    JobState.FAILED: "failed",
    JobState.CANCELLED: "cancelled",
    JobState.TIMEOUT: "timeout",
    JobState.OUT_OF_MEMORY: "out_of_memory",
    JobState.NODE_FAIL: "node_fail",
    JobState.BOOT_FAIL: "boot_fail",
    JobState.DEADLINE: "deadline",
    JobState.PREEMPTED: "preempted",
}

TERMINAL_STATES = frozenset(
    {SUBMIT_FAILED} | {_FROM_SCHEDULER[state] for state in JobState if state.is_terminal}
)
# Undetermined is "unknown, ask again", so the poller keeps tracking it.
ACTIVE_STATES = frozenset(
    {SUBMITTING, PENDING, HELD, RUNNING, "suspended", "completing", UNDETERMINED}
)
QUEUED_STATES = frozenset({PENDING, HELD})

# When several array tasks ended differently, the parent shows the most telling one.
_END_SEVERITY = (
    "node_fail",
    "boot_fail",
    "out_of_memory",
    "timeout",
    "failed",
    "deadline",
    "preempted",
    "cancelled",
    "completed",
)


def portal_state(state: JobState) -> str:
    """The portal state string for a scheduler state."""
    return _FROM_SCHEDULER[state]


def is_terminal(state: str) -> bool:
    return state in TERMINAL_STATES


def is_active(state: str) -> bool:
    return state in ACTIVE_STATES


def can_cancel(state: str) -> bool:
    return state in ACTIVE_STATES and state not in (SUBMITTING, UNDETERMINED)


def can_hold(state: str) -> bool:
    return state == PENDING


def can_release(state: str) -> bool:
    return state == HELD


def is_regression(current: str, proposed: str) -> bool:
    """True when moving ``current`` to ``proposed`` would un-finish a finished job."""
    return is_terminal(current) and proposed != current


def most_telling_end(states: list[str]) -> str:
    """The state an array parent shows once all its tasks have ended."""
    for candidate in _END_SEVERITY:
        if candidate in states:
            return candidate
    return "completed"
