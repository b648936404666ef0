"""What the cluster and the user's allocations allow, as seen when a form is filled in."""

from __future__ import annotations

from dataclasses import dataclass

from app.scheduler.config import DEFAULT_LOG_ROOTS


@dataclass(frozen=True, slots=True)
class PartitionChoice:
    name: str
    max_time_minutes: int | None = None
    is_default: bool = False


@dataclass(frozen=True, slots=True)
class SubmitContext:
    """Choices for partition, account and GPU pickers, and where paths may point.

    Empty ``partitions`` or ``gpu_types`` mean "unknown here": the template's own choices
    apply and the scheduler has the last word at submission.
    """

    cluster: str
    accounts: tuple[str, ...]
    partitions: tuple[PartitionChoice, ...] = ()
    gpu_types: tuple[str, ...] = ()
    roots: tuple[str, ...] = DEFAULT_LOG_ROOTS
    home: str | None = None
    scheduler: str = "slurm"
    """The cluster's scheduler (its adapter's ``capabilities``): whose directives a script uses."""

    def partition(self, name: str | None) -> PartitionChoice | None:
        if name is None:
            return next((p for p in self.partitions if p.is_default), None)
        return next((p for p in self.partitions if p.name == name), None)
