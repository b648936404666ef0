"""Reconciliation of array jobs: the parent row and one row per task Slurm has created."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace
from datetime import datetime

from app.jobs import states
from app.jobs.event_notes import MISSING, tasks_ended
from app.poller.rules import (
    Grace,
    Snapshot,
    TrackedJob,
    Transition,
    chosen_partition,
    filled_from,
    is_settled_in_queue,
    is_task_record,
    observed_changes,
    storable_path,
)
from app.scheduler.states import JobState
from app.scheduler.types import JobInfo
from app.vocabulary.job_states import JobStateName


def array_records(
    array_id: str, queue: Snapshot, accounting: Snapshot, now: datetime, grace: Grace
) -> list[JobInfo]:
    """Every record of one array; a task's terminal accounting record beats its queue one.

    A task that ended in the queue but is not yet in accounting counts as still completing,
    so the parent never ends before the rows of its tasks do.
    """
    merged: dict[str, JobInfo] = {}
    for info in queue.by_array.get(array_id, ()):
        is_unconfirmed = info.state.is_terminal and not is_settled_in_queue(info, now, grace)
        merged[info.job_id] = replace(info, state=JobState.COMPLETING) if is_unconfirmed else info
    for info in accounting.by_array.get(array_id, ()):
        if info.job_id not in merged or info.state.is_terminal:
            merged[info.job_id] = filled_from(info, merged.get(info.job_id))
    return list(merged.values())


def new_task_rows(
    parent: TrackedJob, records: list[JobInfo], known_task_ids: Collection[str], now: datetime
) -> list[Transition]:
    """Rows for tasks Slurm created since the last cycle."""
    created = []
    for info in records:
        if not is_task_record(info) or info.job_id in known_task_ids:
            continue
        # Slurm's own path for the task, where the record has one, is the file it writes.
        paths = {
            "stdout_path": storable_path(info.stdout_path),
            "stderr_path": storable_path(info.stderr_path),
        }
        changes = observed_changes(info, now) | {
            "slurm_job_id": info.job_id,
            "array_task_id": int(info.array_task_id or 0),
        }
        changes |= {column: path for column, path in paths.items() if path}
        created.append(
            Transition(
                None,
                None,
                states.portal_state(info.state),
                info.reason,
                changes,
                parent_job_id=parent.id,
            )
        )
    return created


def active_parent_state(records: list[JobInfo]) -> str:
    task_states = {info.state for info in records if is_task_record(info)}
    if task_states & {JobState.RUNNING, JobState.COMPLETING, JobState.SUSPENDED}:
        return JobStateName.RUNNING
    waiting = [info for info in records if not info.state.is_terminal]
    if waiting and all(info.state is JobState.QUEUED_HELD for info in waiting):
        return JobStateName.HELD
    return JobStateName.PENDING


def _ended_parent(parent: TrackedJob, tasks: list[JobInfo], now: datetime) -> Transition:
    ends = [states.portal_state(info.state) for info in tasks]
    codes = [info.exit_code for info in tasks if info.exit_code is not None]
    ended = [info.end_time for info in tasks if info.end_time is not None]
    started = [info.start_time for info in tasks if info.start_time is not None]
    changes: dict[str, object] = {"last_seen_at": now}
    if codes:
        changes["exit_code"] = max(codes)
    if ended:
        changes["ended_at"] = max(ended)
    if started:
        changes["started_at"] = min(started)
    if ended and started:
        # The array's own elapsed time is the span from its first start to its last end.
        changes["elapsed_seconds"] = max(0, int((max(ended) - min(started)).total_seconds()))
    target = states.most_telling_end(ends)
    reason = tasks_ended(len(tasks), ends.count(JobStateName.COMPLETED))
    return Transition(parent.id, parent.state, target, reason, changes)


def reconcile_parent(
    parent: TrackedJob,
    records: list[JobInfo],
    now: datetime,
    grace: Grace,
) -> Transition | None:
    """The parent's state follows its tasks; it ends only when every task has ended."""
    if not records:
        seen = parent.last_seen_at or parent.created_at
        if parent.state == JobStateName.UNDETERMINED or now - seen < grace.missing:
            return None
        return Transition(parent.id, parent.state, JobStateName.UNDETERMINED, MISSING)
    if states.is_terminal(parent.state):
        return None
    unfinished = [info for info in records if not info.state.is_terminal]
    if unfinished:
        target = active_parent_state(records)
        changes = parent_facts(records) | {"last_seen_at": now}
        return Transition(parent.id, parent.state, target, None, changes)
    tasks = [info for info in records if is_task_record(info)]
    ended = _ended_parent(parent, tasks, now)
    return replace(ended, changes=parent_facts(records) | dict(ended.changes))


def parent_facts(records: list[JobInfo]) -> dict[str, object]:
    """What an array's records say of the array as a whole: when Slurm took it, and the
    partition its tasks run in when they all share one."""
    facts: dict[str, object] = {}
    submitted = [info.submit_time for info in records if info.submit_time is not None]
    if submitted:
        facts["submitted_at"] = min(submitted)
    partitions = {chosen_partition(info) for info in records}
    if len(partitions) == 1 and None not in partitions:
        facts["chosen_partition"] = partitions.pop()
    return facts
