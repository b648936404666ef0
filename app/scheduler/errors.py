"""Typed errors raised by scheduler adapters, and classifiers for Slurm's error texts."""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from app.scheduler.messages import N_
from app.scheduler.sbatch_options import unknown_option_message


class SchedulerError(Exception):
    """Base class of every error the scheduler library raises."""


class SchedulerUnavailable(SchedulerError):
    """The scheduler or the login host could not be reached or answered nonsense."""


class SchedulerTimeout(SchedulerUnavailable):
    """A scheduler command did not finish within its deadline."""


class FileOperationTimedOut(SchedulerTimeout):
    """One request on a cluster's files did not finish within its deadline; says so in
    words for people."""


class NotSent(SchedulerUnavailable):
    """The command never reached the cluster (no connection, no session): it certainly did
    not run, unlike a command whose answer was lost."""


class JobNotFound(SchedulerError):
    """The scheduler does not know the job id (any more)."""


class JobAlreadyEnded(JobNotFound):
    """The job has finished (or is finishing): there is nothing left to act on."""


class PermissionDenied(SchedulerError):
    """The acting user may not do this (e.g. cancel another user's job)."""


class InvalidSpec(SchedulerError):
    """A job spec or request failed validation before anything reached the scheduler."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class PreflightFailed(SchedulerError):
    """A submission would fail; ``problems`` lists (field, plain-language message).

    ``raw`` keeps what Slurm itself said (sbatch's stderr), when it said anything.
    """

    def __init__(self, problems: Sequence[tuple[str, str]], raw: str = "") -> None:
        self.problems = list(problems)
        self.raw = raw
        super().__init__("; ".join(f"{field}: {msg}" for field, msg in self.problems))


class RejectKind(enum.StrEnum):
    """Why the scheduler refused a submission."""

    INVALID_ACCOUNT = "invalid_account"
    INVALID_PARTITION = "invalid_partition"
    INVALID_QOS = "invalid_qos"
    TIME_LIMIT = "time_limit"
    QOS_LIMIT = "qos_limit"
    ASSOCIATION_LIMIT = "association_limit"
    BAD_GRES = "bad_gres"
    UNAVAILABLE_RESOURCES = "unavailable_resources"
    BAD_DIRECTIVE = "bad_directive"
    SCRIPT_ERROR = "script_error"
    OTHER = "other"


class SubmitRejected(SchedulerError):
    """The scheduler refused the job; ``message`` is for people, ``raw`` for logs.

    ``message`` is English, as it is stored with the job; pages show it in their reader's
    language with ``app.scheduler.messages.translate``. ``raw`` is Slurm's, never translated.
    """

    def __init__(self, kind: RejectKind, message: str, raw: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.raw = raw


# (pattern on the lowercased text, kind, plain message). Order matters: the first match wins,
# and the more specific association/QOS texts come before the generic ones. The messages are
# message ids (N_), translated where they are shown.
_RULES: tuple[tuple[str, RejectKind, str], ...] = (
    (
        r"invalid account|account.*(not|no) valid|invalid account or account/partition",
        RejectKind.INVALID_ACCOUNT,
        N_("The account does not exist or you are not a member of it."),
    ),
    (
        r"invalid partition",
        RejectKind.INVALID_PARTITION,
        N_("The partition does not exist or is not available to you."),
    ),
    (
        r"invalid qos",
        RejectKind.INVALID_QOS,
        N_("The quality of service (QOS) does not exist or your account may not use it."),
    ),
    (
        r"association.*limit|assoc.*limit|job violates accounting/qos policy",
        RejectKind.ASSOCIATION_LIMIT,
        N_("The request exceeds a limit of your account."),
    ),
    (
        r"time limit|timelimit",
        RejectKind.TIME_LIMIT,
        N_("The requested time limit is longer than the partition or your allocation allows."),
    ),
    (
        r"qos",
        RejectKind.QOS_LIMIT,
        N_("The request exceeds a limit of the quality of service (QOS)."),
    ),
    (
        r"gres|generic resource",
        RejectKind.BAD_GRES,
        N_("The requested GPUs or generic resources do not exist on this cluster."),
    ),
    (
        r"requested node configuration is not available|more processors requested than permitted",
        RejectKind.UNAVAILABLE_RESOURCES,
        N_("No node in the partition has the requested CPUs, memory or GPUs."),
    ),
    (
        r"unrecognized option|invalid option|unknown key|try \"sbatch --help\"",
        RejectKind.BAD_DIRECTIVE,
        N_("The job contains an option Slurm does not understand."),
    ),
    (
        r"script|interpreter|#!|zero length|dos line breaks",
        RejectKind.SCRIPT_ERROR,
        N_("The job script is not valid."),
    ),
)


_UNRECOGNIZED = re.compile(r"unrecognized option '(--?[^'=\s]+)")
# unknown_option_message's sentence as a refusal of its own: capitalised, with a full stop.
_UNKNOWN_OPTION = (
    N_("Sbatch has no option %(option)s (did you mean %(suggestion)s?)."),
    N_("Sbatch has no option %(option)s."),
)
_REFUSED = N_("The scheduler refused the job.")


def _classify(text: str) -> SubmitRejected:
    lowered = text.lower()
    unknown = _UNRECOGNIZED.search(text)
    if unknown is not None:
        # Named, with the closest option sbatch has, rather than "an unknown option".
        message = unknown_option_message(unknown[1]) + "."
        return SubmitRejected(RejectKind.BAD_DIRECTIVE, message[0].upper() + message[1:], text)
    for pattern, kind, message in _RULES:
        if re.search(pattern, lowered):
            return SubmitRejected(kind, message, text)
    summary = _last_error_line(text) or _REFUSED
    return SubmitRejected(RejectKind.OTHER, summary, text)


def _last_error_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return ""
    return re.sub(r"^(sbatch: )?(error: )?", "", lines[-1])


# Slurm's words when the controller, not the job, is the problem: busy, restarting or out of
# reach. Nothing is wrong with the request and asking again later can succeed; after a
# timeout the job may even have been queued.
_TRANSIENT = re.compile(
    r"unable to contact slurm controller|socket timed out|resource temporarily unavailable"
    r"|temporarily unable to accept|zero bytes were transmitted|communication connection failure"
    r"|connection refused|not responding|in standby mode"
)


def is_transient(text: str) -> bool:
    """True when sbatch's stderr says the controller could not answer, not that it refused."""
    return _TRANSIENT.search(text.lower()) is not None


def classify_sbatch_error(text: str) -> SubmitRejected:
    """Turn sbatch's stderr into a SubmitRejected with a plain-language message."""
    return _classify(text)


def rest_error_texts(errors: Iterable[Mapping[str, Any]]) -> list[str]:
    """Pull human-readable texts out of a slurmrestd ``errors[]`` array (any version)."""
    texts: list[str] = []
    for item in errors:
        text = item.get("error") or item.get("description") or ""
        if text:
            texts.append(str(text))
    return texts


def classify_rest_errors(errors: Sequence[Mapping[str, Any]]) -> SubmitRejected:
    """Turn a slurmrestd submit response's ``errors[]`` into a SubmitRejected."""
    return _classify("\n".join(rest_error_texts(errors)))


class FileUnavailable(SchedulerError):
    """A file on the cluster is missing, unreadable or outside the allowed roots."""


class DiskUsageNotConfigured(SchedulerError):
    """The cluster's configuration names no disk usage command."""


class DiskUsageUnavailable(SchedulerError):
    """The disk usage command failed or printed nothing the portal can read; the message
    says why in the command's own words where it gave any."""


def classify_control_error(text: str) -> SchedulerError:
    """Map scancel/scontrol/slurmrestd texts for job actions onto typed errors."""
    lowered = text.lower()
    if "permission denied" in lowered or "access/permission" in lowered:
        said = _last_error_line(text)
        return PermissionDenied(N_("You can only change your own jobs: %(said)s") % {"said": said})
    if "already completing or completed" in lowered:
        return JobAlreadyEnded(_last_error_line(text))
    if "invalid job id" in lowered or "unable to find" in lowered:
        return JobNotFound(_last_error_line(text) or N_("unknown job"))
    return SchedulerError(_last_error_line(text) or N_("the scheduler refused the request"))


class FileNotFound(FileUnavailable):
    """No such file or folder on the cluster."""


class FileAccessDenied(FileUnavailable):
    """The user's own Unix permissions refuse the operation."""


class OutsideRoots(FileUnavailable):
    """The path, once its symlinks are resolved on the cluster, lies outside the roots."""


class InvalidFilePath(SchedulerError):
    """A path or a new name the portal will not send to the cluster; says why."""


class FileExists(SchedulerError):
    """Something of that name is already there."""


class FolderNotEmpty(SchedulerError):
    """A folder to delete still holds entries."""


class UploadOutOfStep(SchedulerError):
    """An upload's piece does not continue the part already written."""

    def __init__(self, message: str, expected_offset: int) -> None:
        super().__init__(message)
        self.expected_offset = expected_offset
