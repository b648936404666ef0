"""Read-only value objects exchanged with scheduler adapters."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from app.scheduler.states import JobState


@dataclass(frozen=True, slots=True)
class Gres:
    """A generic resource request such as ``gpu:a100:2`` (``type`` may be empty)."""

    name: str
    count: int
    type: str = ""


@dataclass(frozen=True, slots=True)
class JobSpec:
    """Everything needed to submit one batch job; options never go into the script.

    ``time_limit`` is minutes (int) or a timedelta. ``memory_mb`` is per node and
    ``mem_per_cpu_mb`` per CPU; set at most one. ``array`` uses Slurm's grammar
    (``1-10%2``, ``1,3,5``). ``comment`` carries the portal's job UUID so a submission
    whose answer was lost can be found again.
    """

    script: str
    name: str = "job"
    account: str | None = None
    partition: str | None = None
    time_limit: int | timedelta | None = None
    cpus_per_task: int | None = None
    ntasks: int | None = None
    nodes: int | None = None
    memory_mb: int | None = None
    mem_per_cpu_mb: int | None = None
    gres: tuple[Gres, ...] = ()
    array: str | None = None
    working_dir: str | None = None
    stdout: str | None = None
    stderr: str | None = None
    environment: Mapping[str, str] = field(default_factory=dict)
    export_env: bool = False
    dependency: str | None = None
    comment: str | None = None
    qos: str | None = None
    hold: bool = False
    begin: str | None = None
    args: tuple[str, ...] = ()
    """Arguments the script receives as ``$1``, ``$2``… (``sbatch job.sh ARG…``)."""

    @property
    def time_limit_minutes(self) -> int | None:
        """The time limit in whole minutes, rounded up as Slurm does."""
        if self.time_limit is None:
            return None
        if isinstance(self.time_limit, timedelta):
            seconds = int(self.time_limit.total_seconds())
            return max(1, -(-seconds // 60))
        return self.time_limit


@dataclass(frozen=True, slots=True)
class Tres:
    """Allocated trackable resources parsed from a TRES string."""

    cpus: int | None = None
    memory_bytes: int | None = None
    gpus: int | None = None
    nodes: int | None = None


@dataclass(frozen=True, slots=True)
class JobInfo:
    """What the scheduler knows about one job (or one array task).

    Datetimes are UTC-aware. ``exit_code``/``signal`` are None until known. ``native``
    keeps the raw record so callers can reach fields this class does not model.
    """

    job_id: str
    state: JobState
    native_state: str = ""
    raw_job_id: str | None = None
    """Slurm's own number for this record: an array task has one of its own (``%j``)."""
    array_job_id: str | None = None
    array_task_id: str | None = None
    reason: str | None = None
    exit_code: int | None = None
    signal: int | None = None
    submit_time: datetime | None = None
    start_time: datetime | None = None
    end_time: datetime | None = None
    time_limit: timedelta | None = None
    elapsed_seconds: int | None = None
    total_cpu_seconds: float | None = None
    max_rss_bytes: int | None = None
    alloc: Tres = field(default_factory=Tres)
    nodes: str | None = None
    user: str | None = None
    account: str | None = None
    partition: str | None = None
    name: str | None = None
    comment: str | None = None
    work_dir: str | None = None
    stdout_path: str | None = None
    stderr_path: str | None = None
    native: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PartitionInfo:
    """A partition with its limits and current capacity."""

    name: str
    max_time: timedelta | None
    default_time: timedelta | None
    is_default: bool
    state: str
    total_nodes: int
    idle_nodes: int
    total_cpus: int
    idle_cpus: int


@dataclass(frozen=True, slots=True)
class Reservation:
    """A reservation of nodes for a time window (``scontrol show reservation``).

    ``start``/``end`` are UTC-aware; ``end`` is None for a reservation without end. Flags
    are Slurm's upper-case names (``MAINT``, ``IGNORE_JOBS``…). ``partition`` is None when
    the reservation is not tied to one. ``native`` keeps every field Slurm printed.
    """

    name: str
    start: datetime
    end: datetime | None
    flags: frozenset[str] = frozenset()
    nodes: str = ""
    partition: str | None = None
    state: str = ""
    native: Mapping[str, str] = field(default_factory=dict)

    @property
    def is_maintenance(self) -> bool:
        """Slurm's MAINT flag: the nodes are down for maintenance during the window."""
        return "MAINT" in self.flags


@dataclass(frozen=True, slots=True)
class Association:
    """A user's right to charge an account (optionally only on one partition)."""

    account: str
    partition: str | None
    qos: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TresMinutesLimit:
    """A GrpTRESMins limit: minutes of each resource an account (``user`` empty) or one
    user's association may use in all, e.g. ``{"cpu": 60000}``."""

    account: str
    user: str
    minutes: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class FileChunk:
    """A slice of a file read on the cluster; ``next_offset`` continues the read."""

    data: bytes
    offset: int
    next_offset: int
    eof: bool
    size: int


@dataclass(frozen=True, slots=True)
class ClusterStatus:
    """Result of a health probe."""

    is_up: bool
    detail: str = ""
    latency_ms: float | None = None
