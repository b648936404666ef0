"""Job dependencies as value objects: what ``sbatch --dependency`` is given, and how a
dependency stands once the jobs it names have moved on.

The portal only ever builds the option's value from these objects; it goes to sbatch as one
argv word (``--dependency=afterok:123:124``), never into a script. Slurm itself decides when a
dependent job may start; :func:`verdict` is the same rule for the fake scheduler and for
explaining a waiting job.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from app.scheduler.states import JobState


class DependencyKind(enum.StrEnum):
    """The kinds of dependency the portal offers (a subset of sbatch's)."""

    AFTER_OK = "afterok"
    """Start after every named job completed successfully."""
    AFTER_ANY = "afterany"
    """Start after every named job ended, however it ended."""
    AFTER_NOT_OK = "afternotok"
    """Start after every named job ended without succeeding (a clean-up or a retry)."""
    SINGLETON = "singleton"
    """Start once no earlier job of the same name and user is pending or running."""


class Verdict(enum.StrEnum):
    WAITING = "waiting"
    SATISFIED = "satisfied"
    NEVER = "never"
    """A named job ended in a way that means the dependent job can never start."""


@dataclass(frozen=True, slots=True)
class Dependency:
    """One dependency clause: a kind and the scheduler ids of the jobs it names."""

    kind: DependencyKind
    job_ids: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if (self.kind is DependencyKind.SINGLETON) != (not self.job_ids):
            raise ValueError("singleton names no jobs; every other kind names at least one")
        for job_id in self.job_ids:
            if not _JOB_ID.fullmatch(job_id):
                raise ValueError(f"not a job id: {job_id!r}")

    def option_value(self) -> str:
        """``afterok:123:124`` or ``singleton``."""
        return ":".join((self.kind.value, *self.job_ids))


_JOB_ID = re.compile(r"\d{1,12}(_\d{1,7})?")


def dependency_option(dependencies: Sequence[Dependency]) -> str | None:
    """The value of ``--dependency`` requiring every clause (``,``); None for none."""
    if not dependencies:
        return None
    return ",".join(dependency.option_value() for dependency in dependencies)


def parse_dependency(text: str | None) -> tuple[Dependency, ...]:
    """The clauses of a ``--dependency`` value built by :func:`dependency_option`.

    Raises ValueError for a kind the portal does not offer or a malformed clause.
    """
    if not text:
        return ()
    clauses = []
    for clause in text.split(","):
        kind, *ids = clause.split(":")
        clauses.append(Dependency(DependencyKind(kind), tuple(ids)))
    return tuple(clauses)


_OK = frozenset({JobState.COMPLETED})


def _clause_verdict(kind: DependencyKind, states: Sequence[JobState | None]) -> Verdict:
    if kind is DependencyKind.SINGLETON:
        return Verdict.SATISFIED
    if any(state is None or not state.is_terminal for state in states):
        return Verdict.WAITING
    ended = [state for state in states if state is not None]
    if kind is DependencyKind.AFTER_OK and any(state not in _OK for state in ended):
        return Verdict.NEVER
    if kind is DependencyKind.AFTER_NOT_OK and any(state in _OK for state in ended):
        return Verdict.NEVER
    return Verdict.SATISFIED


def verdict(dependencies: Sequence[Dependency], states: Mapping[str, JobState | None]) -> Verdict:
    """How the clauses stand given each named job's state (None: still unknown).

    Every clause must hold (``,``): one that never can makes the whole never.
    """
    verdicts = [
        _clause_verdict(d.kind, [states.get(job_id) for job_id in d.job_ids]) for d in dependencies
    ]
    if Verdict.NEVER in verdicts:
        return Verdict.NEVER
    if Verdict.WAITING in verdicts:
        return Verdict.WAITING
    return Verdict.SATISFIED
