"""Every query the jobs service and the poller make, under names that say what they are for;
the poller's per-cycle reads and bulk writes are in ``app.jobs.tracking``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache
from typing import Any

from sqlalchemy import (
    Select,
    case,
    func,
    or_,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased, load_only
from sqlalchemy.orm.attributes import set_committed_value

from app.jobs.states import TERMINAL_STATES
from app.models.base import utc_now
from app.models.job_templates import TemplateVersion
from app.models.jobs import Job, JobEvent
from app.models.projects import Project
from app.models.users import User, UserClusterAccount
from app.vocabulary.job_states import JobStateName

# Without a trigram index, a name search scans id windows of this size, newest first.
SEARCH_WINDOW = 50_000


@dataclass(frozen=True, slots=True)
class JobFilters:
    """What a job list may be narrowed to; None means "any"."""

    states: tuple[str, ...] = ()
    project_id: int | None = None
    cluster: str | None = None
    owner_user_id: int | None = None
    include_array_tasks: bool = False


async def get_by_id(session: AsyncSession, job_id: int) -> Job | None:
    return await session.get(Job, job_id)


async def newest_owned_with_slurm_id(
    session: AsyncSession, owner_user_id: int, slurm_job_id: str
) -> int | None:
    query = (
        select(Job.id)
        .where(Job.owner_user_id == owner_user_id, Job.slurm_job_id == slurm_job_id)
        .order_by(Job.id.desc())
        .limit(1)
    )
    return await session.scalar(query)


async def get_by_idempotency_key(session: AsyncSession, owner_user_id: int, key: str) -> Job | None:
    query = select(Job).where(Job.owner_user_id == owner_user_id, Job.idempotency_key == key)
    return (await session.scalars(query)).one_or_none()


async def get_project(session: AsyncSession, project_id: int) -> Project | None:
    return await session.get(Project, project_id)


async def get_cluster_username(session: AsyncSession, user_id: int, cluster: str) -> str | None:
    query = select(UserClusterAccount.username).where(
        UserClusterAccount.user_id == user_id, UserClusterAccount.cluster == cluster
    )
    return (await session.scalars(query)).one_or_none()


async def list_by_ids(session: AsyncSession, job_ids: Sequence[int]) -> list[Job]:
    rows: list[Job] = []
    # Bounded chunks keep every backend under its bound-parameter limit.
    for start in range(0, len(job_ids), 500):
        chunk = job_ids[start : start + 500]
        rows.extend(await session.scalars(select(Job).where(Job.id.in_(chunk))))
    return rows


def visible_jobs_query(
    actor_user_id: int, is_site_admin: bool, project_ids: Sequence[int]
) -> Select[Job]:
    """Jobs the actor owns or that belong to a project the actor is a member of."""
    query = select(Job)
    if is_site_admin:
        return query
    return query.where(or_(Job.owner_user_id == actor_user_id, Job.project_id.in_(project_ids)))


async def ids_by_slurm_id(
    session: AsyncSession, visible: Select[Job], slurm_ids: Sequence[str]
) -> list[tuple[int, str, str]]:
    """(portal id, cluster, Slurm id) of the ``visible`` jobs with one of ``slurm_ids``."""
    if not slurm_ids:
        return []
    query = visible.with_only_columns(Job.id, Job.cluster, Job.slurm_job_id)
    rows = await session.execute(query.where(Job.slurm_job_id.in_(slurm_ids)).order_by(Job.id))
    return [(row[0], row[1], row[2] or "") for row in rows]


def apply_filters(query: Select[Job], filters: JobFilters) -> Select[Job]:
    if filters.states:
        query = query.where(Job.state.in_(filters.states))
    if filters.project_id is not None:
        query = query.where(Job.project_id == filters.project_id)
    if filters.cluster is not None:
        query = query.where(Job.cluster == filters.cluster)
    if filters.owner_user_id is not None:
        query = query.where(Job.owner_user_id == filters.owner_user_id)
    if not filters.include_array_tasks:
        query = query.where(Job.array_parent_id.is_(None))
    return query


async def list_events_for_job(session: AsyncSession, job_id: int) -> list[JobEvent]:
    query = select(JobEvent).where(JobEvent.job_id == job_id).order_by(JobEvent.id)
    return list(await session.scalars(query))


async def list_array_tasks(
    session: AsyncSession,
    parent_id: int,
    states: Sequence[str] = (),
    after_index: int | None = None,
    limit: int | None = None,
) -> list[Job]:
    """An array's task rows by index, optionally in ``states`` and after ``after_index``."""
    query = select(Job).where(Job.array_parent_id == parent_id)
    if states:
        query = query.where(Job.state.in_(states))
    if after_index is not None:
        query = query.where(Job.array_task_id > after_index)
    query = query.order_by(Job.array_task_id).limit(limit)
    return list(await session.scalars(query))


async def count_array_tasks(session: AsyncSession, parent_id: int) -> dict[str, int]:
    """How many of an array's tasks are in each state."""
    query = (
        select(Job.state, func.count()).where(Job.array_parent_id == parent_id).group_by(Job.state)
    )
    return {state: count for state, count in (await session.execute(query)).all()}


async def sum_array_tasks(session: AsyncSession, parent_id: int) -> list[int | None]:
    """(longest elapsed, elapsed of ended tasks, their CPU time, largest RSS, CPUs per task,
    memory per task in MB)."""
    ended = Job.total_cpu_seconds.is_not(None)
    query = select(
        func.max(Job.elapsed_seconds),
        func.sum(case((ended, Job.elapsed_seconds), else_=None)),
        func.sum(Job.total_cpu_seconds),
        func.max(Job.max_rss_bytes),
        func.max(Job.alloc_cpus),
        func.max(Job.alloc_mem_mb),
    ).where(Job.array_parent_id == parent_id)
    # PostgreSQL sums integers as numeric.
    return [None if value is None else int(value) for value in (await session.execute(query)).one()]


def add_event(
    session: AsyncSession,
    job_id: int,
    from_state: str | None,
    to_state: str,
    *,
    reason: str | None,
    source: str,
) -> None:
    session.add(
        JobEvent(
            job_id=job_id,
            from_state=from_state,
            to_state=to_state,
            reason=reason[:255] if reason else None,
            source=source,
        )
    )


async def attach_slurm_id(session: AsyncSession, job: Job, slurm_job_id: str, state: str) -> bool:
    """Record the Slurm id on ``job``, loaded in ``session``, unless one is already recorded.

    Conditional, so a submitter and the poller racing to attach the same job cannot both win.
    When it wins, ``job`` shows the row as saved without reading it again. Slurm accepted the
    job just now: that is its submission time until the poller reads Slurm's own.
    """
    saved = {
        "slurm_job_id": slurm_job_id,
        "state": state,
        "submit_error": None,
        "submitted_at": job.submitted_at or utc_now(),
    }
    saved_at = await session.scalar(
        update(Job)
        .where(Job.id == job.id, Job.slurm_job_id.is_(None))
        .values(**saved)
        .returning(Job.updated_at)
        .execution_options(synchronize_session=False)
    )
    if saved_at is None:
        return False
    for column, value in (saved | {"updated_at": saved_at}).items():
        set_committed_value(job, column, value)
    return True


@dataclass(frozen=True, slots=True)
class JobListFilters:
    """What the job lists of the pages narrow to, besides ``JobFilters``."""

    base: JobFilters = JobFilters()
    template_id: int | None = None
    since: date | None = None
    until: date | None = None
    text: str = ""


@dataclass(frozen=True, slots=True)
class JobListRow:
    """One list row: the job, its project's name, its owner's login and an array's task counts."""

    job: Job
    project_name: str
    owner_login: str
    tasks: int | None
    tasks_running: int | None
    tasks_completed: int | None
    tasks_ended: int | None


_task = aliased(Job)
_RUNNING = (JobStateName.RUNNING, JobStateName.COMPLETING)


def _task_count(*conditions: Any) -> Any:
    counted = select(func.count()).where(_task.array_parent_id == Job.id, *conditions)
    # Only array parents pay for the count; PostgreSQL skips the sub-plan otherwise.
    return case((Job.array_spec.is_not(None), counted.scalar_subquery()), else_=None)


@lru_cache(maxsize=1)
def _task_counts() -> tuple[Any, ...]:
    """An array's tasks: all, running, completed, ended. Built once, not for every page."""
    return (
        _task_count(),
        _task_count(_task.state.in_(_RUNNING)),
        _task_count(_task.state == JobStateName.COMPLETED),
        _task_count(_task.state.in_(TERMINAL_STATES)),
    )


def text_matches(text: str) -> Any:
    """Name contains ``text`` (ILIKE, served by the trigram index) or the Slurm id is it."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return or_(
        Job.name.ilike(f"%{escaped}%", escape="\\"),
        Job.slurm_job_id == text,
        Job.slurm_job_id.like(f"{escaped}\\_%", escape="\\"),
    )


def _narrowed(query: Select[Any], wanted: JobListFilters) -> Select[Any]:
    query = apply_filters(query, wanted.base)
    if wanted.template_id is not None:
        versions = select(TemplateVersion.id).where(
            TemplateVersion.template_id == wanted.template_id
        )
        query = query.where(Job.template_version_id.in_(versions))
    if wanted.since is not None:
        query = query.where(Job.created_at >= datetime.combine(wanted.since, time(), UTC))
    if wanted.until is not None:
        end = datetime.combine(wanted.until + timedelta(days=1), time(), UTC)
        query = query.where(Job.created_at < end)
    text = wanted.text.strip()
    return query.where(text_matches(text)) if text else query


async def _in_windows(
    session: AsyncSession, query: Select[Any], before: int | None, wanted: int
) -> list[Any]:
    """Newest matches first, one bounded id range at a time, stopping once a page is full.

    For SQLite, which has no index for ``LIKE '%text%'``: each step stays a range scan.
    """
    upper = before or (await session.scalar(select(func.max(Job.id))) or 0) + 1
    found: list[Any] = []
    while upper > 1 and len(found) < wanted:
        window = query.where(Job.id < upper, Job.id >= upper - SEARCH_WINDOW)
        ordered = window.order_by(Job.id.desc()).limit(wanted - len(found))
        found.extend((await session.execute(ordered)).all())
        upper -= SEARCH_WINDOW
    return found


async def list_job_rows(
    session: AsyncSession,
    visible: Select[Job],
    wanted: JobListFilters,
    before_id: int | None,
    limit: int,
    columns: Sequence[str] = (),
) -> list[JobListRow]:
    """One keyset page (ids below ``before_id``) of ``visible`` jobs, newest first.

    A single query: project name and owner are joined, array tasks counted inside it. With
    ``columns``, the jobs hold only those (and their id); reading any other raises.
    """
    query = _narrowed(visible, wanted).join(Project, Project.id == Job.project_id)
    if columns:
        query = query.options(load_only(*(getattr(Job, c) for c in columns), raiseload=True))
    query = query.join(User, User.id == Job.owner_user_id)
    query = query.add_columns(Project.name, User.login, *_task_counts())
    is_indexed = session.get_bind().dialect.name == "postgresql"
    if wanted.text.strip() and not is_indexed:
        found = await _in_windows(session, query, before_id, limit)
    else:
        if before_id is not None:
            query = query.where(Job.id < before_id)
        found = list((await session.execute(query.order_by(Job.id.desc()).limit(limit))).all())
    return [JobListRow(*row) for row in found]
