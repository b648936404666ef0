"""LSF's refusals (bsub's, bkill's, bstop's, bresume's) as the scheduler library's errors."""

from __future__ import annotations

import re

from app.scheduler.errors import (
    JobAlreadyEnded,
    JobNotFound,
    PermissionDenied,
    RejectKind,
    SchedulerError,
    SubmitRejected,
)
from app.scheduler.messages import N_

# (pattern on bsub's words, kind, plain message). bsub ends each refusal with "Job not
# submitted."; the plain message says what to change, LSF's words stay in ``raw``.
_RULES: tuple[tuple[str, RejectKind, str], ...] = (
    (
        r"no such queue",
        RejectKind.INVALID_PARTITION,
        N_("The queue does not exist on this cluster."),
    ),
    (
        r"runlimit|run limit",
        RejectKind.TIME_LIMIT,
        N_("The requested run time is longer than the queue allows."),
    ),
    (
        r"too many processors|processors requested|proclimit",
        RejectKind.UNAVAILABLE_RESOURCES,
        N_("The queue allows fewer cores than the job asks for."),
    ),
    (
        r"not accept exclusive",
        RejectKind.UNAVAILABLE_RESOURCES,
        N_("The queue does not take jobs that want a whole host."),
    ),
    (
        r"user.*not.*queue|not a user of",
        RejectKind.INVALID_PARTITION,
        N_("You may not use this queue."),
    ),
    (r"project", RejectKind.INVALID_ACCOUNT, N_("The project does not exist or is not yours.")),
    (
        r"bad argument|illegal option|invalid option|usage:",
        RejectKind.BAD_DIRECTIVE,
        N_("The job contains an option bsub does not understand."),
    ),
)
# LSF's words when mbatchd, not the job, is the problem: asking again later can succeed.
_TRANSIENT = re.compile(
    r"batch system daemon not responding|failed in an lsf library call|connection reset"
    r"|lim is down|cannot connect|timed out",
    re.IGNORECASE,
)


def is_transient(text: str) -> bool:
    """True when LSF says mbatchd could not answer, not that it refused."""
    return _TRANSIENT.search(text) is not None


def classify_bsub_error(text: str) -> SubmitRejected:
    """bsub's refusal as a SubmitRejected (its own words kept in ``raw``)."""
    lowered = text.lower()
    for pattern, kind, message in _RULES:
        if re.search(pattern, lowered):
            return SubmitRejected(kind, message, text.strip())
    return SubmitRejected(
        RejectKind.OTHER, last_line(text) or N_("The scheduler refused the job."), text.strip()
    )


def classify_control_error(text: str) -> SchedulerError:
    """bkill/bstop/bresume's ``Job <1>: …`` as a typed error."""
    lowered = text.lower()
    said = last_line(text)
    if "permission denied" in lowered:
        return PermissionDenied(N_("You can only change your own jobs: %(said)s") % {"said": said})
    if "already finished" in lowered:
        return JobAlreadyEnded(said)
    if "no matching job" in lowered or "not found" in lowered:
        return JobNotFound(said or N_("unknown job"))
    return SchedulerError(said or N_("the scheduler refused the request"))


def last_line(text: str) -> str:
    """The last line that says something."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""
