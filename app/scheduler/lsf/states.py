"""LSF job states, and how an ended job's history says why it ended."""

from __future__ import annotations

from app.scheduler.states import JobState

LSF_STATE_MAP: dict[str, JobState] = {
    "PEND": JobState.QUEUED,
    # Suspended while pending: by the user (bsub -H, bstop) or an administrator.
    "PSUSP": JobState.QUEUED_HELD,
    "RUN": JobState.RUNNING,
    "USUSP": JobState.SUSPENDED,
    "SSUSP": JobState.SUSPENDED,
    "DONE": JobState.COMPLETED,
    "EXIT": JobState.FAILED,
    # Killed, but its host has not confirmed the end yet: not over until it has.
    "ZOMBI": JobState.COMPLETING,
    "UNKWN": JobState.UNDETERMINED,
    # Chunk jobs waiting for their chunk, and (LSF 10) hosts being provisioned.
    "WAIT": JobState.QUEUED,
    "PROV": JobState.QUEUED,
}
"""Every LSF (and OpenLava) job state onto a JobState; unknown names are UNDETERMINED."""


def state_from_lsf(native: str) -> JobState:
    """Map an LSF status (``PEND``, ``EXIT``…) onto a JobState."""
    return LSF_STATE_MAP.get(native.strip().upper(), JobState.UNDETERMINED)


# The signal actions sbatchd logs for a job it ends itself (OpenLava's SIG_TERM_*), with the
# reason LSF 9+ prints as TERM_* and the state that reason means.
END_ACTIONS: dict[str, tuple[str, JobState]] = {
    "SIG_TERM_RUNLIMIT": ("TERM_RUNLIMIT", JobState.TIMEOUT),
    "SIG_TERM_MEMLIMIT": ("TERM_MEMLIMIT", JobState.OUT_OF_MEMORY),
    "SIG_TERM_CPULIMIT": ("TERM_CPULIMIT", JobState.TIMEOUT),
    "SIG_TERM_DEADLINE": ("TERM_DEADLINE", JobState.DEADLINE),
    "SIG_TERM_PROCESSLIMIT": ("TERM_PROCESSLIMIT", JobState.FAILED),
    "SIG_TERM_LOAD": ("TERM_LOAD", JobState.FAILED),
    "SIG_TERM_WINDOW": ("TERM_WINDOW", JobState.FAILED),
    "SIG_TERM_OTHER": ("TERM_OTHER", JobState.FAILED),
    "SIG_TERM_FORCE": ("TERM_FORCE_ADMIN", JobState.CANCELLED),
    "SIG_TERM_USER": ("TERM_OWNER", JobState.CANCELLED),
    "KILL": ("TERM_OWNER", JobState.CANCELLED),
}
"""sbatchd's signal action → (LSF's TERM_ reason, the state it means)."""
