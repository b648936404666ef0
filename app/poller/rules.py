"""Reconciliation rules for one job row at a time, and the value types they exchange.

Nothing here touches the database, the network or the clock. The rules are recorded in
ADR 0002.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from app.jobs import states
from app.jobs.event_notes import FOUND_BY_SUBMISSION_ID, MISSING, NO_SLURM_JOB
from app.poller.arrays import contains_task, task_ranges
from app.scheduler.job_ids import array_task_of
from app.scheduler.states import JobState
from app.scheduler.types import JobInfo
from app.vocabulary.job_states import JobStateName

# Must stay well under Grace.missing so a job still in the queue is never called missing.
LAST_SEEN_REFRESH = timedelta(minutes=1)


class TrackedJob(NamedTuple):
    """A snapshot of one active job row, taken in a short read-only session.

    A named tuple rather than a frozen dataclass: the poller makes 100,000 of them every
    cycle at a large site, and a tuple is made from a row four times faster (26 against
    120 ms for 100,000).
    """

    id: int
    uuid: str
    state: str
    slurm_job_id: str | None
    created_at: datetime
    last_seen_at: datetime | None = None
    reason: str | None = None
    is_array_parent: bool = False
    array_parent_id: int | None = None
    expected_start_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Grace:
    """How long to wait before drawing conclusions from an absence."""

    # Longer than the SSH command timeout (30 s), so a slow sbatch is never declared lost.
    submit: timedelta = timedelta(seconds=60)
    missing: timedelta = timedelta(minutes=5)
    accounting_lag: timedelta = timedelta(seconds=30)


@dataclass(frozen=True, slots=True)
class Transition:
    """A change to one job row; ``job_id`` None means "create this array task row"."""

    job_id: int | None
    from_state: str | None
    to_state: str
    reason: str | None = None
    changes: Mapping[str, Any] = field(default_factory=dict)
    parent_job_id: int | None = None

    @property
    def is_state_change(self) -> bool:
        return self.from_state != self.to_state


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Scheduler records indexed the ways reconciliation looks them up."""

    by_id: Mapping[str, JobInfo]
    by_comment: Mapping[str, JobInfo]
    by_array: Mapping[str, Sequence[JobInfo]]

    @classmethod
    def of(cls, infos: Iterable[JobInfo]) -> Snapshot:
        by_id: dict[str, JobInfo] = {}
        by_comment: dict[str, JobInfo] = {}
        by_array: dict[str, list[JobInfo]] = defaultdict(list)
        for info in infos:
            by_id[info.job_id] = info
            if info.comment:
                by_comment.setdefault(info.comment, info)
            if info.array_job_id is not None:
                by_array[info.array_job_id].append(info)
        return cls(by_id, by_comment, dict(by_array))


def is_task_record(info: JobInfo) -> bool:
    return info.array_task_id is not None and info.array_task_id.isdigit()


def slurm_id_of(info: JobInfo) -> str:
    """The id a portal row records: the array's id for any record of an array."""
    return info.array_job_id if info.array_job_id is not None else info.job_id


_NOT_STARTED = frozenset({JobState.QUEUED, JobState.QUEUED_HELD, JobState.UNDETERMINED})


def actual_start(info: JobInfo, now: datetime) -> datetime | None:
    """When the job really started, or None.

    For a pending job Slurm's StartTime is only the backfill scheduler's *expected* start,
    often in the future; it becomes a fact once the job has left the pending states.
    """
    if info.start_time is None or info.state in _NOT_STARTED or info.start_time > now:
        return None
    return info.start_time


def expected_start(info: JobInfo, now: datetime) -> datetime | None:
    """Slurm's estimate of when a pending job will start; None once that is not a forecast."""
    if info.state is not JobState.QUEUED or info.start_time is None or info.start_time <= now:
        return None
    return info.start_time


# What Slurm shows in the node list of a job that has no nodes (sacct, scontrol, REST).
_NO_NODES = frozenset({"", "None assigned", "(null)", "n/a"})
NODE_LIST_WIDTH = 255


def allocated_nodes(info: JobInfo, now: datetime) -> str | None:
    """The nodes a job that has started runs or ran on, as Slurm writes them (``c[1-2]``)."""
    nodes = (info.nodes or "").strip()
    if actual_start(info, now) is None or nodes in _NO_NODES or len(nodes) > NODE_LIST_WIDTH:
        return None
    return nodes


def chosen_partition(info: JobInfo) -> str | None:
    """The one partition a record names (a pending job asked for several lists them all)."""
    name = (info.partition or "").strip()
    return name if name and "," not in name and len(name) <= PARTITION_WIDTH else None


PARTITION_WIDTH = 64
# The width of the jobs table's path columns; Slurm allows longer (PATH_MAX).
PATH_COLUMN_WIDTH = 1024


def storable_path(path: str | None) -> str | None:
    """``path`` when a column can hold it: a cut path would name another file."""
    return path if path and len(path) <= PATH_COLUMN_WIDTH else None


def observed_changes(info: JobInfo, now: datetime) -> dict[str, Any]:
    """Column values a scheduler record tells us about (None values are left out)."""
    values: dict[str, Any] = {
        "native_state": info.native_state[:64] or None,
        "slurm_raw_id": info.raw_job_id,
        "submitted_at": info.submit_time,
        "started_at": actual_start(info, now),
        "elapsed_seconds": info.elapsed_seconds,
        "node_list": allocated_nodes(info, now),
        "chosen_partition": chosen_partition(info),
        "alloc_cpus": info.alloc.cpus,
        "alloc_mem_mb": None
        if info.alloc.memory_bytes is None
        else info.alloc.memory_bytes // 2**20,
        "alloc_gpus": info.alloc.gpus,
    }
    if info.state.is_terminal:
        values |= {
            "ended_at": info.end_time,
            "exit_code": info.exit_code,
            "exit_signal": info.signal,
            "max_rss_bytes": info.max_rss_bytes,
            "total_cpu_seconds": None
            if info.total_cpu_seconds is None
            else round(info.total_cpu_seconds),
        }
    values = {key: value for key, value in values.items() if value is not None}
    values["reason"] = info.reason[:255] if info.reason else None
    values["expected_start_at"] = expected_start(info, now)
    values["last_seen_at"] = now
    return values


PROGRESSING_STATES = frozenset(
    {JobStateName.RUNNING, JobStateName.COMPLETING, JobStateName.SUSPENDED}
)


def is_news(job: TrackedJob, target: str, info: JobInfo, now: datetime) -> bool:
    """Whether a record says more than "still there": a new state or reason, progress, or
    a new or moved start estimate (news the job's pages show from the cycle that reads it).
    """
    if target != job.state or (info.reason or "")[:255] != (job.reason or ""):
        return True
    return target in PROGRESSING_STATES or expected_start(info, now) != job.expected_start_at


def move(job: TrackedJob, info: JobInfo, now: datetime) -> Transition | None:
    """The transition a scheduler record implies for ``job``, if any.

    An unchanged job is only marked as seen, once a minute: thousands of idle pending jobs
    would otherwise cost a full row write each every cycle. The mark alone is written in bulk
    (store.apply_transitions), since a large queue holds a hundred thousand of them.
    """
    target = states.portal_state(info.state)
    if states.is_regression(job.state, target):
        return None
    if is_news(job, target, info, now):
        return Transition(job.id, job.state, target, info.reason, observed_changes(info, now))
    seen = job.last_seen_at or job.created_at
    if now - seen < LAST_SEEN_REFRESH:
        return None
    return Transition(job.id, job.state, target, info.reason, {"last_seen_at": now})


def _missing(job: TrackedJob, now: datetime, grace: Grace) -> Transition | None:
    seen = job.last_seen_at or job.created_at
    if job.state == JobStateName.UNDETERMINED or now - seen < grace.missing:
        return None
    return Transition(job.id, job.state, JobStateName.UNDETERMINED, MISSING)


def is_settled_in_queue(info: JobInfo, now: datetime, grace: Grace) -> bool:
    # A terminal queue record has no exit code; wait a little for accounting to catch up.
    ended = info.end_time or now
    return now - ended >= grace.accounting_lag


def reconcile_single(
    job: TrackedJob, queue: Snapshot, accounting: Snapshot, now: datetime, grace: Grace
) -> Transition | None:
    """A plain job or one array task, identified by its Slurm id."""
    assert job.slurm_job_id is not None
    recorded = accounting.by_id.get(job.slurm_job_id)
    queued = queue.by_id.get(job.slurm_job_id)
    if recorded is not None and recorded.state.is_terminal:
        return move(job, filled_from(recorded, queued), now)
    if queued is not None and not queued.state.is_terminal:
        return move(job, queued, now)
    if queued is not None:
        return move(job, queued, now) if is_settled_in_queue(queued, now, grace) else None
    if recorded is not None:
        return move(job, recorded, now)
    pending = pending_array_record(job.slurm_job_id, queue)
    if pending is not None:
        return move(job, pending, now)
    return _missing(job, now, grace)


def filled_from(record: JobInfo, other: JobInfo | None) -> JobInfo:
    """``record`` (from accounting) with what ``other`` (the queue's record of the same job)
    names and it does not: just after a job ends, accounting may not have its partition yet,
    and it never has the log paths, which the queue gives with each task's own ``%j``."""
    if other is None:
        return record
    missing = {
        name: getattr(other, name)
        for name in ("partition", "stdout_path", "stderr_path", "work_dir")
        if not getattr(record, name) and getattr(other, name)
    }
    return replace(record, **missing) if missing else record


def pending_array_record(slurm_job_id: str, queue: Snapshot) -> JobInfo | None:
    """The array's not-yet-started record (``12_[3-10]``, PBS's ``12[].server``) that still
    covers this task."""
    task_of = array_task_of(slurm_job_id)
    if task_of is None:
        return None
    array_id, task = task_of
    for info in queue.by_array.get(array_id, ()):
        if not is_task_record(info) and contains_task(task_ranges(info.array_task_id or ""), task):
            return info
    return None


def reconcile_submitting(
    job: TrackedJob, queue: Snapshot, accounting: Snapshot, now: datetime, grace: Grace
) -> Transition | None:
    """Attach a row whose Slurm id was never recorded, or declare the submission failed."""
    if now - job.created_at < grace.submit:
        return None
    found = queue.by_comment.get(job.uuid) or accounting.by_comment.get(job.uuid)
    if found is None:
        return Transition(
            job.id,
            job.state,
            JobStateName.SUBMIT_FAILED,
            NO_SLURM_JOB,
            {"submit_error": NO_SLURM_JOB},
        )
    target = states.portal_state(found.state)
    if found.array_job_id is not None:
        target = JobStateName.PENDING if found.state.is_terminal else target
    changes = observed_changes(found, now) | {"slurm_job_id": slurm_id_of(found)}
    return Transition(job.id, job.state, target, FOUND_BY_SUBMISSION_ID, changes)
