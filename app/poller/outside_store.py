"""The database side of jobs submitted outside the portal: who is known, and the new rows."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db import unit_of_work
from app.jobs import repository, states
from app.jobs.event_notes import SUBMITTED_OUTSIDE
from app.models.jobs import Job
from app.models.projects import Project
from app.models.users import User, UserClusterAccount
from app.poller.arrays_reconcile import active_parent_state
from app.poller.outside import Directory, OutsideJob, not_recorded
from app.poller.rules import observed_changes, storable_path
from app.vocabulary.job_states import JobStateName

# Left to the accounting record: the queue's ended record has no exit code yet.
_END_FACTS = frozenset({"ended_at", "exit_code", "exit_signal", "max_rss_bytes"})
_ARRAY_FACTS = _END_FACTS | {"elapsed_seconds", "total_cpu_seconds", "started_at", "native_state"}
# Slurm ids are looked up in chunks so a burst of outside jobs keeps each query small.
LOOKUP_CHUNK = 500
# New rows are written this many at a time, within the cycle's one transaction.
RECORD_CHUNK = 1000


async def load_directory(sessionmaker: async_sessionmaker[AsyncSession], cluster: str) -> Directory:
    """Active portal users' usernames and the projects' accounts on ``cluster``."""
    users = (
        select(UserClusterAccount.username, UserClusterAccount.user_id)
        .join(User, User.id == UserClusterAccount.user_id)
        .where(UserClusterAccount.cluster == cluster, User.is_active.is_(True))
    )
    projects = select(Project.slurm_account, Project.id).where(Project.cluster == cluster)
    async with sessionmaker() as session:
        user_ids = {name: user_id for name, user_id in (await session.execute(users)).all()}
        project_ids = {account: pid for account, pid in (await session.execute(projects)).all()}
    return Directory(user_ids, project_ids)


async def _recorded(
    session: AsyncSession, cluster: str, candidates: Sequence[OutsideJob]
) -> set[str]:
    """Slurm ids of candidates a row already stands for: by id, or by the submission's UUID
    in the job's comment (a portal submission whose row has ended without its id)."""
    found: set[str] = set()
    for start in range(0, len(candidates), LOOKUP_CHUNK):
        chunk = candidates[start : start + LOOKUP_CHUNK]
        ids = [c.info.job_id for c in chunk]
        by_id = select(Job.slurm_job_id).where(Job.cluster == cluster, Job.slurm_job_id.in_(ids))
        found.update(str(value) for value in await session.scalars(by_id))
        comments = {c.info.comment: c.info.job_id for c in chunk if c.info.comment}
        if comments:
            ours = select(Job.uuid).where(Job.uuid.in_(list(comments)))
            found.update(comments[str(value)] for value in await session.scalars(ours))
    return found


def _first_state(outside: OutsideJob) -> str:
    """The state a new row starts in; an ended job's exit code is in accounting, read next."""
    if outside.array_records:
        if all(r.state.is_terminal for r in outside.array_records):
            return JobStateName.COMPLETING
        return active_parent_state(list(outside.array_records))
    info = outside.info
    return JobStateName.COMPLETING if info.state.is_terminal else states.portal_state(info.state)


def _left_to_later(outside: OutsideJob) -> frozenset[str]:
    """Facts the first record cannot give: an array's are its tasks' (their rows, from the
    next cycle on); an ended job's are in accounting."""
    if outside.array_records:
        return _ARRAY_FACTS
    return _END_FACTS if outside.info.state.is_terminal else frozenset()


def _row(cluster: str, outside: OutsideJob, now: datetime) -> Job:
    info = outside.info
    limit = info.time_limit
    job = Job(
        uuid=str(uuid.uuid4()),
        owner_user_id=outside.owner_user_id,
        project_id=outside.project_id,
        cluster=cluster,
        parameters={},
        script="",
        slurm_job_id=info.job_id,
        name=(info.name or "job")[:200],
        state=_first_state(outside),
        array_spec=outside.array_spec,
        partition=(info.partition or None) and info.partition[:64],
        time_limit_minutes=None if limit is None else int(limit.total_seconds()) // 60,
        work_dir=storable_path(info.work_dir),
        stdout_path=storable_path(info.stdout_path),
        stderr_path=storable_path(info.stderr_path),
        submitted_outside=True,
    )
    skipped = _left_to_later(outside)
    for column, value in observed_changes(info, now).items():
        if column not in skipped:
            setattr(job, column, value)
    return job


async def record_outside_jobs(
    sessionmaker: async_sessionmaker[AsyncSession],
    cluster: str,
    candidates: Sequence[OutsideJob],
    now: datetime,
) -> int:
    """Rows for the candidates no row holds yet; how many were added."""
    if not candidates:
        return 0
    async with unit_of_work(sessionmaker) as session:
        known = await _recorded(session, cluster, candidates)
        added = not_recorded(candidates, known)
        for start in range(0, len(added), RECORD_CHUNK):
            await _add_rows(session, cluster, added[start : start + RECORD_CHUNK], now)
    return len(added)


async def _add_rows(
    session: AsyncSession, cluster: str, added: Sequence[OutsideJob], now: datetime
) -> None:
    """One chunk's rows and their first events, flushed and then let go: a queue of 100,000
    outside jobs would otherwise hold 100,000 rows and events in memory until the commit."""
    rows = [_row(cluster, outside, now) for outside in added]
    session.add_all(rows)
    await session.flush()  # one round trip for every id the events need
    for job in rows:
        repository.add_event(
            session, job.id, None, job.state, reason=SUBMITTED_OUTSIDE, source="poller"
        )
    await session.flush()
    session.expunge_all()
