"""A queued job that can never start because of its dependency, explained with its choices.

Slurm 22.05 leaves such a job pending for ever with the reason ``DependencyNeverSatisfied``
(unless the site sets ``kill_invalid_depend``); nothing else tells the submitter why, nor that
only they can end the wait.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from app.i18n import _, pgettext
from app.jobs import states
from app.models.jobs import Job
from app.scheduler.dependencies import DependencyKind, parse_dependency

NEVER_SATISFIED = "DependencyNeverSatisfied"


class Choice(enum.StrEnum):
    CANCEL = "cancel"
    RESUBMIT_WITHOUT_DEPENDENCY = "resubmit_without_dependency"


@dataclass(frozen=True, slots=True)
class Stuck:
    """Why the job can never start, in plain words, and what its owner can do about it."""

    explanation: str
    choices: tuple[Choice, ...] = (Choice.CANCEL, Choice.RESUBMIT_WITHOUT_DEPENDENCY)


def _condition(kind: DependencyKind) -> str:
    return {
        DependencyKind.AFTER_OK: pgettext("dependency", "completed successfully"),
        DependencyKind.AFTER_NOT_OK: pgettext("dependency", "ended without succeeding"),
        DependencyKind.AFTER_ANY: pgettext("dependency", "ended"),
        DependencyKind.SINGLETON: pgettext("dependency", "ended"),
    }[kind]


def _waited_for(dependency: str | None) -> str | None:
    try:
        clauses = [c for c in parse_dependency(dependency) if c.job_ids]
    except ValueError:
        return None
    parts = [
        _("job %(ids)s %(condition)s", ids=", ".join(c.job_ids), condition=_condition(c.kind))
        for c in clauses
    ]
    return "; ".join(parts) or None


def stuck(job: Job) -> Stuck | None:
    """The explanation for a queued job Slurm says can never start; None for any other."""
    if job.state not in states.QUEUED_STATES or job.reason != NEVER_SATISFIED:
        return None
    waited = _waited_for(job.dependency)
    if waited is None:
        start = _("A job it depends on ended in a way its dependency does not accept")
    else:
        start = _(
            "It was to start only once %(waited)s, and that can no longer happen", waited=waited
        )
    return Stuck(
        _(
            "%(start)s, so it will never start and Slurm keeps it waiting until you act. "
            "Cancel it, or resubmit a copy without the dependency.",
            start=start,
        )
    )
