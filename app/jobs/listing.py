"""The job list, once for every surface: what it can be narrowed to and one page of it.

The pages, the dashboard and the API ask the same question with the same filters (state,
project, cluster, template, submission dates, a name or Slurm id, only the actor's own jobs)
and get the same rows, newest first, in one query per page; array tasks are folded into
their array unless one is searched for by its id (``169_2``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date

from sqlalchemy.ext.asyncio import AsyncSession

from app.jobs import repository
from app.jobs.repository import JobFilters, JobListFilters, JobListRow
from app.users.actor import Actor

ARRAY_TASK_ID = re.compile(r"\d{1,12}_\d{1,7}")
MAX_PAGE = 200


@dataclass(frozen=True, slots=True)
class ListQuery:
    """What a job list is narrowed to; empty values mean "any"."""

    states: tuple[str, ...] = ()
    project_id: int | None = None
    cluster: str | None = None
    template_id: int | None = None
    since: date | None = None
    until: date | None = None
    text: str = ""
    mine_only: bool = False


def list_filters(actor: Actor, query: ListQuery) -> JobListFilters:
    """The repository's filters for ``query`` as ``actor`` asks it."""
    base = JobFilters(
        states=query.states,
        project_id=query.project_id,
        cluster=query.cluster,
        owner_user_id=actor.user_id if query.mine_only else None,
        include_array_tasks=ARRAY_TASK_ID.fullmatch(query.text.strip()) is not None,
    )
    return JobListFilters(base, query.template_id, query.since, query.until, query.text[:200])


async def list_page(
    session: AsyncSession,
    actor: Actor,
    query: ListQuery,
    before: int | None,
    limit: int,
    columns: Sequence[str] = (),
) -> tuple[list[JobListRow], int | None]:
    """One page of the jobs ``actor`` may see, newest first, and the id the next one
    starts below (None on the last page). ``columns``: as ``repository.list_job_rows``."""
    size = max(1, min(limit, MAX_PAGE))
    visible = repository.visible_jobs_query(
        actor.user_id, actor.is_site_admin, sorted(actor.project_roles)
    )
    found = await repository.list_job_rows(
        session, visible, list_filters(actor, query), before, size + 1, columns
    )
    has_more = len(found) > size
    return found[:size], found[size - 1].job.id if has_more else None


async def portal_ids(
    session: AsyncSession, actor: Actor, slurm_jobs: Iterable[tuple[str, str]]
) -> dict[tuple[str, str], int]:
    """The portal's id for each (cluster, Slurm id) that names a job ``actor`` may see; a
    Slurm id reused after a cluster's state was wiped names the newest such job."""
    wanted = set(slurm_jobs)
    visible = repository.visible_jobs_query(
        actor.user_id, actor.is_site_admin, sorted(actor.project_roles)
    )
    found = await repository.ids_by_slurm_id(session, visible, sorted({s for _, s in wanted}))
    return {(cluster, slurm): id_ for id_, cluster, slurm in found if (cluster, slurm) in wanted}
