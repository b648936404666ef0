"""Portal job states: the map from scheduler states and what each state allows.

The states themselves are one enum, app/vocabulary/job_states.py; nothing here lists them
again.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.scheduler.states import JobState
from app.vocabulary.job_states import RENAMED
from app.vocabulary.job_states import JobStateName as S

_FROM_SCHEDULER: dict[JobState, S] = {
    state: RENAMED.get(state) or S(state.value) for state in JobState
}

TERMINAL_STATES = frozenset(
    {S.SUBMIT_FAILED} | {_FROM_SCHEDULER[state] for state in JobState if state.is_terminal}
)
# Undetermined is "unknown, ask again", so the poller keeps tracking it.
ACTIVE_STATES = frozenset(
    {S.SUBMITTING, S.UNDETERMINED}
    | {_FROM_SCHEDULER[state] for state in JobState if state.is_active}
)
QUEUED_STATES = frozenset({S.PENDING, S.HELD})

# When several array tasks ended differently, the parent shows the most telling one.
_END_SEVERITY = (
    S.NODE_FAIL,
    S.BOOT_FAIL,
    S.OUT_OF_MEMORY,
    S.TIMEOUT,
    S.FAILED,
    S.DEADLINE,
    S.PREEMPTED,
    S.CANCELLED,
    S.COMPLETED,
)


def portal_state(state: JobState) -> S:
    """The portal state for a scheduler state."""
    return _FROM_SCHEDULER[state]


def is_terminal(state: str) -> bool:
    return state in TERMINAL_STATES


def is_active(state: str) -> bool:
    return state in ACTIVE_STATES


def can_cancel(state: str) -> bool:
    return state in ACTIVE_STATES and state not in (S.SUBMITTING, S.UNDETERMINED)


def can_hold(state: str) -> bool:
    return state == S.PENDING


def can_release(state: str) -> bool:
    return state == S.HELD


def is_regression(current: str, proposed: str) -> bool:
    """True when moving ``current`` to ``proposed`` would un-finish a finished job."""
    return is_terminal(current) and proposed != current


def most_telling_end(states: Sequence[str]) -> S:
    """The state an array parent shows once all its tasks have ended."""
    for candidate in _END_SEVERITY:
        if candidate in states:
            return candidate
    return S.COMPLETED
