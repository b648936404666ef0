"""What a notification rule can ask for, and which job state changes are those events.

- **started**: the job began to run: it entered ``running`` or ``completing`` from a state in
  which it had not run yet, or it was first seen already ended with a Slurm start time (a
  short job can start and end between two poll cycles).
- **ended**: the job reached any end state Slurm reports (``completed``, ``failed``,
  ``cancelled``, ``timeout``, ``out_of_memory``, ``node_fail``, ``boot_fail``, ``deadline``,
  ``preempted``). A refused submission (``submit_failed``) is not a job end: the submitter is
  told at once by the page or the API.
- **failed**: the job ended without finishing its work: every end above except ``completed``
  and ``cancelled`` (someone chose to cancel it).

Each event happens at most once per job (the outbox's unique key is rule, job, event), so a
job Slurm requeues and starts again does not notify "started" a second time.
"""

from __future__ import annotations

from app.i18n import _
from app.jobs.states import is_terminal
from app.vocabulary.job_states import JobStateName as S
from app.vocabulary.notify import NotifyEvent

_RUN_STATES = frozenset({S.RUNNING, S.COMPLETING})
_HAS_RUN = frozenset({S.RUNNING, S.COMPLETING, S.SUSPENDED})
_NOT_FAILURES = frozenset({S.COMPLETED, S.CANCELLED, S.SUBMIT_FAILED})


def _started(from_state: str | None, to_state: str, has_start_time: bool) -> bool:
    if from_state in _HAS_RUN or (from_state is not None and is_terminal(from_state)):
        return False
    if to_state in _RUN_STATES:
        return True
    return is_terminal(to_state) and to_state != S.SUBMIT_FAILED and has_start_time


def events_for(from_state: str | None, to_state: str, *, has_start_time: bool) -> list[str]:
    """The events a change from ``from_state`` to ``to_state`` is, in the order they happened."""
    if from_state == to_state:
        return []
    found = []
    if _started(from_state, to_state, has_start_time):
        found.append(NotifyEvent.STARTED.value)
    ended = is_terminal(to_state) and to_state != S.SUBMIT_FAILED
    if ended and not (from_state is not None and is_terminal(from_state)):
        found.append(NotifyEvent.ENDED.value)
        if to_state not in _NOT_FAILURES:
            found.append(NotifyEvent.FAILED.value)
    return found


def describe(event: str) -> str:
    """How a page names an event: what a job does, to follow "when a job"."""
    return {
        NotifyEvent.STARTED: _("starts"),
        NotifyEvent.ENDED: _("ends (in any way)"),
        NotifyEvent.FAILED: _("fails"),
        NotifyEvent.ALLOCATION: _(
            "(not a job) a project I manage has used %(first)s %%, then %(second)s %%, of its "
            "allocation",
            first=80,
            second=95,
        ),
        NotifyEvent.SESSION_IDLE: _(
            "is an interactive session nobody has used for a while, about to be ended"
        ),
    }[NotifyEvent(event)]


def happened(event: str) -> str:
    """What a delivered notification told: the job "started", "ended" or "failed"."""
    words = {
        NotifyEvent.STARTED.value: _("started"),
        NotifyEvent.ENDED.value: _("ended"),
        NotifyEvent.FAILED.value: _("failed"),
        NotifyEvent.ALLOCATION.value: _("allocation nearly used"),
        NotifyEvent.SESSION_IDLE.value: _("idle session to be ended"),
    }
    return words.get(event, event)
