"""PBS's refusals (qsub, qdel, qhold, qrls) as the scheduler library's typed errors."""

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

# (pattern on the lowercased text, kind, plain message); the first match wins.
_RULES: tuple[tuple[str, RejectKind, str], ...] = (
    (
        r"unknown queue|queue is not enabled|queue disabled",
        RejectKind.INVALID_PARTITION,
        N_("The queue does not exist or does not take jobs."),
    ),
    (
        r"unauthorized request|not authorized|access from host not allowed",
        RejectKind.INVALID_ACCOUNT,
        N_("You may not submit to this queue or with this account."),
    ),
    (
        r"walltime",
        RejectKind.TIME_LIMIT,
        N_("The requested time limit is longer than the queue allows."),
    ),
    (
        r"(exceeds|violates) .*limits|insufficient amount of resource|can never run",
        RejectKind.UNAVAILABLE_RESOURCES,
        N_("No node has the requested CPUs, memory or GPUs, or the queue's limits forbid them."),
    ),
    (
        r"unknown resource|illegal attribute or resource value|invalid option|directive error"
        r"|usage: qsub",
        RejectKind.BAD_DIRECTIVE,
        N_("The job contains an option or resource PBS does not understand."),
    ),
    (
        r"script|interpreter|zero length",
        RejectKind.SCRIPT_ERROR,
        N_("The job script is not valid."),
    ),
)

# PBS's words when the server, not the request, is the problem.
_TRANSIENT = re.compile(
    r"cannot connect to server|connection refused|communication failure|server is busy"
    r"|timed out|no route to host"
)


def is_transient(text: str) -> bool:
    """True when qsub could not reach the server rather than being refused by it."""
    return _TRANSIENT.search(text.lower()) is not None


def last_line(text: str) -> str:
    """The last line PBS printed, without the command's ``qsub:`` prefix."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return re.sub(r"^q[a-z]+: ", "", lines[-1]) if lines else ""


def classify_qsub_error(text: str) -> SubmitRejected:
    """qsub's stderr as a SubmitRejected with a plain message; ``raw`` keeps PBS's words."""
    lowered = text.lower()
    for pattern, kind, message in _RULES:
        if re.search(pattern, lowered):
            return SubmitRejected(kind, message, text)
    summary = last_line(text) or N_("The scheduler refused the job.")
    return SubmitRejected(RejectKind.OTHER, summary, text)


def classify_control_error(text: str) -> SchedulerError:
    """qdel/qhold/qrls's stderr as a typed error."""
    lowered = text.lower()
    said = last_line(text)
    if "unauthorized request" in lowered or "permission denied" in lowered:
        return PermissionDenied(N_("You can only change your own jobs: %(said)s") % {"said": said})
    if "job has finished" in lowered or "request invalid for finished" in lowered:
        return JobAlreadyEnded(said)
    if "unknown job id" in lowered:
        return JobNotFound(said or N_("unknown job"))
    return SchedulerError(said or N_("the scheduler refused the request"))
