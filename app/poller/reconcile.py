"""``reconcile``: what one poll cycle changes, decided without I/O.

Given the tracked rows, one queue snapshot, this cycle's accounting records and ``now``,
return the transitions to apply. ``accounting_ids`` says which Slurm ids the cycle must ask
accounting about, so that a single batched call covers every job that left the queue.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime

from app.jobs import states
from app.poller.arrays_reconcile import array_records, new_task_rows, reconcile_parent
from app.poller.rules import (
    Grace,
    Snapshot,
    TrackedJob,
    Transition,
    pending_array_record,
    reconcile_single,
    reconcile_submitting,
)
from app.scheduler.types import JobInfo
from app.vocabulary.job_states import JobStateName

__all__ = [
    "Grace",
    "Snapshot",
    "TrackedJob",
    "Transition",
    "accounting_ids",
    "reconcile",
    "stale_submissions",
]


def _is_array_settled_in_queue(array_id: str, queue: Snapshot) -> bool:
    records = queue.by_array.get(array_id, ())
    return bool(records) and all(not info.state.is_terminal for info in records)


def _needs_accounting(job: TrackedJob, queue: Snapshot) -> bool:
    assert job.slurm_job_id is not None
    if job.is_array_parent:
        return not _is_array_settled_in_queue(job.slurm_job_id, queue)
    queued = queue.by_id.get(job.slurm_job_id)
    if queued is not None:
        return queued.state.is_terminal
    return pending_array_record(job.slurm_job_id, queue) is None


def _indexed(infos: Iterable[JobInfo] | Snapshot) -> Snapshot:
    # A cycle indexes its queue once and hands the Snapshot to each step (100,000 records).
    return infos if isinstance(infos, Snapshot) else Snapshot.of(infos)


def accounting_ids(
    jobs: Iterable[TrackedJob], queue_infos: Iterable[JobInfo] | Snapshot
) -> list[str]:
    """Slurm ids of tracked jobs that left the queue or whose queue record is terminal."""
    queue = _indexed(queue_infos)
    wanted = {
        job.slurm_job_id
        for job in jobs
        if job.slurm_job_id is not None
        and not states.is_terminal(job.state)
        and _needs_accounting(job, queue)
    }
    return sorted(wanted)


def stale_submissions(
    jobs: Iterable[TrackedJob],
    queue_infos: Iterable[JobInfo] | Snapshot,
    now: datetime,
    grace: Grace,
) -> list[TrackedJob]:
    """Rows still ``submitting`` past the grace period that the queue cannot explain."""
    queue = _indexed(queue_infos)
    return [
        job
        for job in jobs
        if job.state == JobStateName.SUBMITTING
        and job.slurm_job_id is None
        and now - job.created_at >= grace.submit
        and job.uuid not in queue.by_comment
    ]


def reconcile(
    db_jobs: Sequence[TrackedJob],
    queue_infos: Iterable[JobInfo] | Snapshot,
    accounting_infos: Iterable[JobInfo],
    now: datetime,
    grace: Grace | None = None,
) -> list[Transition]:
    """Transitions (state changes and refreshed facts) for this cycle, in row order."""
    rules = grace or Grace()
    queue = _indexed(queue_infos)
    accounting = Snapshot.of(accounting_infos)
    known_tasks: dict[int, set[str]] = defaultdict(set)
    for job in db_jobs:
        if job.array_parent_id is not None and job.slurm_job_id is not None:
            known_tasks[job.array_parent_id].add(job.slurm_job_id)
    transitions: list[Transition] = []
    for job in db_jobs:
        if states.is_terminal(job.state):
            continue
        if job.slurm_job_id is None:
            found = reconcile_submitting(job, queue, accounting, now, rules)
            transitions.extend([found] if found else [])
            continue
        if job.is_array_parent:
            records = array_records(job.slurm_job_id, queue, accounting, now, rules)
            transitions.extend(new_task_rows(job, records, known_tasks[job.id], now))
            parent = reconcile_parent(job, records, now, rules)
            transitions.extend([parent] if parent else [])
            continue
        single = reconcile_single(job, queue, accounting, now, rules)
        transitions.extend([single] if single else [])
    return transitions
