"""The job rows a poll cycle reads and writes in bulk: at a large site 100,000 of them every
cycle, so read as plain column tuples and written without loading them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Boolean, Row, Table, and_, bindparam, select, type_coerce, union_all, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.jobs.states import ACTIVE_STATES
from app.models.jobs import Job


async def list_tracking_rows_for_cluster(session: AsyncSession, cluster: str) -> list[Row[Any]]:
    """Active jobs plus every task row of an active array, with only the deciding columns,
    in this order: id, uuid, state, slurm_job_id, created_at, last_seen_at, reason, whether
    the row is an array's parent, array_parent_id, expected_start_at (the poller's
    ``TrackedJob`` takes them by position).

    Finished tasks are included so that a task Slurm still lists is not created twice. Read
    through the table, not the mapped class: at 100,000 rows every cycle, the ORM's loading
    of plain column tuples cost as much as the query itself. Two parts, each on its own
    index: asked as one condition ("active, or a task of an active array"), PostgreSQL read
    every job the cluster ever ran, every cycle (100,000 finished ones to find none active).
    """
    jobs = Job.__table__.c
    is_array_parent = and_(jobs.array_spec.is_not(None), jobs.array_parent_id.is_(None))
    columns = (
        jobs.id,
        jobs.uuid,
        jobs.state,
        jobs.slurm_job_id,
        jobs.created_at,
        jobs.last_seen_at,
        jobs.reason,
        type_coerce(is_array_parent, Boolean).label("is_array_parent"),
        jobs.array_parent_id,
        jobs.expected_start_at,
    )
    is_active = jobs.state.in_(ACTIVE_STATES)
    active_parents = select(jobs.id).where(jobs.cluster == cluster, is_active, is_array_parent)
    active = select(*columns).where(jobs.cluster == cluster, is_active)
    ended_tasks = select(*columns).where(
        jobs.array_parent_id.in_(active_parents), jobs.state.not_in(ACTIVE_STATES)
    )
    both = union_all(active, ended_tasks)
    return list(await session.execute(both.order_by(both.selected_columns.id)))


async def mark_seen(session: AsyncSession, job_ids: Sequence[int], moment: datetime) -> None:
    """``last_seen_at`` of many rows at once, without loading them."""
    for start in range(0, len(job_ids), 5000):
        chunk = job_ids[start : start + 5000]
        await session.execute(update(Job).where(Job.id.in_(chunk)).values(last_seen_at=moment))


async def update_keeping_state(
    session: AsyncSession, changes: Sequence[tuple[int, str, Mapping[str, Any]]]
) -> None:
    """(job id, its state, column values) for many rows at once, without loading them: one
    statement per set of columns, run for each row still in that state (a row whose state
    moved meanwhile is left alone, as a loaded one would be)."""
    table = cast(Table, Job.__table__)
    groups: dict[tuple[str, ...], list[tuple[int, str, Mapping[str, Any]]]] = {}
    for change in changes:
        groups.setdefault(tuple(sorted(change[2])), []).append(change)
    for columns, members in groups.items():
        names = {column: f"new_{column}" for column in columns}
        statement = (
            update(table)
            .where(table.c.id == bindparam("row_id"), table.c.state == bindparam("row_state"))
            .values({c: bindparam(names[c], type_=table.c[c].type) for c in columns})
        )
        # Each chunk's parameters made just before it is sent: a poller starting on a full
        # queue writes 100,000 rows at once, and their parameters all made first took
        # 113 MB on top of the changes themselves.
        for start in range(0, len(members), 5000):
            rows = [
                {"row_id": job_id, "row_state": state}
                | {names[column]: value for column, value in values.items()}
                for job_id, state, values in members[start : start + 5000]
            ]
            await session.execute(statement, rows)
