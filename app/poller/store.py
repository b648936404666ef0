"""The poller's database side: a short read of tracked jobs, one short write per cycle."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db import unit_of_work
from app.jobs import repository, tracking
from app.models.clusters import ClusterStatus
from app.models.jobs import Job
from app.nodes import records as node_records
from app.notifications import outbox
from app.notifications.outbox import StateChange
from app.poller.reconcile import TrackedJob, Transition
from app.scheduler.nodes import NodesReport
from app.scheduler.types import PartitionInfo

# Rows loaded, changed and flushed at a time within a cycle's one transaction.
UPDATE_CHUNK = 1000


@dataclass(frozen=True, slots=True)
class Reports:
    """What a cycle's extra work read, written with its outcome (None: not read this time)."""

    partitions: list[PartitionInfo] | None = None
    nodes: NodesReport | None = None


def _minutes(limit: timedelta | None) -> int | None:
    return None if limit is None else int(limit.total_seconds()) // 60


def partition_record(partition: PartitionInfo) -> dict[str, Any]:
    """A partition as stored in ``cluster_status.partitions`` (JSON-friendly)."""
    return {
        "name": partition.name,
        "state": partition.state,
        "is_default": partition.is_default,
        "max_minutes": _minutes(partition.max_time),
        "default_minutes": _minutes(partition.default_time),
        "total_nodes": partition.total_nodes,
        "idle_nodes": partition.idle_nodes,
        "total_cpus": partition.total_cpus,
        "idle_cpus": partition.idle_cpus,
    }


async def load_tracked_jobs(
    sessionmaker: async_sessionmaker[AsyncSession], cluster: str
) -> list[TrackedJob]:
    async with sessionmaker() as session:
        rows = await tracking.list_tracking_rows_for_cluster(session, cluster)
    # The columns come in TrackedJob's order: a large queue tracks 100,000 rows every cycle,
    # and reading each column of each row by name cost more than the query.
    return list(map(TrackedJob._make, rows))


def _task_row(parent: Job, change: Transition) -> Job:
    task = Job(
        uuid=str(uuid.uuid4()),
        owner_user_id=parent.owner_user_id,
        project_id=parent.project_id,
        cluster=parent.cluster,
        template_version_id=parent.template_version_id,
        parameters={},
        script=parent.script,
        array_parent_id=parent.id,
        submitted_outside=parent.submitted_outside,
        name=parent.name,
        state=change.to_state,
        partition=parent.partition,
        qos=parent.qos,
        time_limit_minutes=parent.time_limit_minutes,
        # What each task asked for and where it writes: the array's own, per task.
        nodes=parent.nodes,
        ntasks=parent.ntasks,
        cpus_per_task=parent.cpus_per_task,
        memory_mb=parent.memory_mb,
        gpus=parent.gpus,
        gpu_type=parent.gpu_type,
        work_dir=parent.work_dir,
        stdout_path=parent.stdout_path,
        stderr_path=parent.stderr_path,
    )
    for column, value in change.changes.items():
        setattr(task, column, value)
    return task


async def _create_tasks(session: AsyncSession, creations: Sequence[Transition]) -> None:
    parent_ids = sorted({c.parent_job_id for c in creations if c.parent_job_id is not None})
    parents = {job.id: job for job in await repository.list_by_ids(session, parent_ids)}
    created = [
        (_task_row(parents[change.parent_job_id], change), change)
        for change in creations
        if change.parent_job_id in parents
    ]
    session.add_all([task for task, _ in created])
    await session.flush()  # one round trip for the ids of a whole array's new tasks
    for task, change in created:
        repository.add_event(
            session, task.id, None, change.to_state, reason=change.reason, source="poller"
        )


def _apply_one(session: AsyncSession, job: Job, change: Transition) -> StateChange | None:
    """Apply one decision; the state change made, if any, for the notifications outbox."""
    # A row changed since it was read (e.g. the submitter attached it) is left alone;
    # the next cycle sees its new state.
    if job.state != change.from_state:
        return None
    if "slurm_job_id" in change.changes and job.slurm_job_id is not None:
        return None
    for column, value in change.changes.items():
        setattr(job, column, value)
    if not change.is_state_change:
        return None
    job.state = change.to_state
    repository.add_event(
        session,
        job.id,
        change.from_state,
        change.to_state,
        reason=change.reason,
        source="poller",
    )
    # An array notifies once, through its parent row, not once per task.
    if job.array_parent_id is not None:
        return None
    return StateChange(
        job.id, job.owner_user_id, change.from_state, job.state, job.started_at is not None
    )


async def apply_transitions(
    sessionmaker: async_sessionmaker[AsyncSession], transitions: Sequence[Transition]
) -> None:
    """Everything one cycle decided, in a single short transaction."""
    if not transitions:
        return
    existing = [t for t in transitions if t.job_id is not None]
    # A state change writes an event and a notification, an attachment checks the row.
    updates = [t for t in existing if t.is_state_change or "slurm_job_id" in t.changes]
    in_place = [t for t in existing if not (t.is_state_change or "slurm_job_id" in t.changes)]
    async with unit_of_work(sessionmaker) as session:
        await _write_without_loading(session, in_place)
        changed: list[StateChange] = []
        for start in range(0, len(updates), UPDATE_CHUNK):
            changed += await _apply_chunk(session, updates[start : start + UPDATE_CHUNK])
        await _create_tasks(session, [t for t in transitions if t.job_id is None])
        # In this transaction: the changes and their notifications commit together or not at all.
        await outbox.record_state_changes(session, changed)


async def _apply_chunk(session: AsyncSession, updates: Sequence[Transition]) -> list[StateChange]:
    """One chunk of the changes that load their rows, flushed and then let go: a poller
    starting on a full queue changes every row at once, and 100,000 loaded rows with their
    events would otherwise stay in memory until the commit."""
    rows = await repository.list_by_ids(session, [t.job_id for t in updates if t.job_id])
    by_id = {row.id: row for row in rows}
    changed = []
    for change in updates:
        row = by_id.get(change.job_id or 0)
        made = None if row is None else _apply_one(session, row, change)
        if made is not None:
            changed.append(made)
    await session.flush()
    session.expunge_all()
    return changed


async def _write_without_loading(session: AsyncSession, changes: Sequence[Transition]) -> None:
    """News that leaves the state as it is, written without loading the rows: one cycle can
    bring it for every waiting job at once (a poller starting on a full queue, a partition
    going down), and most cycles bring "still there" marks for thousands of them."""
    seen = [t for t in changes if _is_seen_mark(t)]
    for moment in {t.changes["last_seen_at"] for t in seen}:
        marked = [t.job_id for t in seen if t.job_id and t.changes["last_seen_at"] == moment]
        await tracking.mark_seen(session, marked, moment)
    await tracking.update_keeping_state(
        session,
        [(t.job_id, t.to_state, t.changes) for t in changes if t.job_id and not _is_seen_mark(t)],
    )


def _is_seen_mark(change: Transition) -> bool:
    """A transition that only records the job was still there (rules.move)."""
    return not change.is_state_change and change.changes.keys() == {"last_seen_at"}


async def _status_row(session: AsyncSession, cluster: str) -> ClusterStatus:
    row = await session.scalar(select(ClusterStatus).where(ClusterStatus.cluster == cluster))
    if row is None:
        row = ClusterStatus(cluster=cluster, consecutive_failures=0, calls_last_cycle=0)
        session.add(row)
    return row


async def record_cycle(
    sessionmaker: async_sessionmaker[AsyncSession],
    cluster: str,
    *,
    now: datetime,
    calls: int,
    seconds: float,
    error: str | None,
    reports: Reports | None = None,
) -> int:
    """Heartbeat for /healthz; returns the number of consecutive failures."""
    async with unit_of_work(sessionmaker) as session:
        row = await _status_row(session, cluster)
        if reports is not None and reports.partitions is not None:
            row.partitions = [partition_record(p) for p in reports.partitions]
            row.partitions_at = now
        if reports is not None and reports.nodes is not None:
            row.nodes = [node_records.node_record(n) for n in reports.nodes.nodes]
            row.node_partitions = [
                node_records.partition_record(p) for p in reports.nodes.partitions
            ]
            row.nodes_at = now
        row.calls_last_cycle = calls
        row.cycle_seconds = seconds
        if error is None:
            row.last_contact_at = now
            row.last_error = None
            row.consecutive_failures = 0
        else:
            row.last_error = error
            row.consecutive_failures = (row.consecutive_failures or 0) + 1
        return row.consecutive_failures
