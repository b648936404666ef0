"""The dashboard, and the job-list view it shares with the job history page.

The rows come from ``jobs.repository.list_job_rows``: one query per page, keyset-paged on
the primary key, with the project name and array task counts inside it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.announcements import service as announcements
from app.deps import AppsDep, ClusterNamesDep, SessionDep, SettingsDep
from app.i18n import _, format_number, ngettext
from app.interactive.definitions import AppDefinition
from app.interactive.sessions import describe, ends_asked, own_sessions
from app.job_templates import service as job_templates
from app.job_templates.values import format_duration
from app.jobs import listing, repository, states
from app.jobs.end_causes import format_seconds
from app.jobs.listing import ListQuery
from app.models.base import utc_now
from app.models.clusters import ClusterStatus
from app.models.jobs import JOB_STATES
from app.projects import service as projects
from app.reports.allocation import member_burndowns
from app.reports.burndown_chart import summary as burndown_summary
from app.users.actor import Actor
from app.web import jobs_fragments as view
from app.web.auth import CurrentUser, WebContextDep
from app.web.views import page

PAGE_SIZE = 50
RECENT_JOBS = 10
QUICK_LINKS = 5
# A cluster not heard from for this many poll intervals is shown as unreachable.
STALE_POLLS = 3

router = APIRouter(include_in_schema=False)


@dataclass(frozen=True, slots=True)
class HistoryFilters:
    state: str | None = None
    project_id: int | None = None
    cluster: str | None = None
    template_id: int | None = None
    since: date | None = None
    until: date | None = None
    text: str = ""
    mine_only: bool = False
    """Only the actor's own jobs; the job list's default ("Mine")."""
    active_only: bool = False
    finished_only: bool = False

    def query_string(self) -> str:
        pairs = {
            "state": self.state,
            "project": self.project_id,
            "cluster": self.cluster,
            "template": self.template_id,
            "since": self.since,
            "until": self.until,
            "q": self.text or None,
            "whose": None if self.mine_only else "projects",
        }
        return urlencode({key: value for key, value in pairs.items() if value is not None})


@dataclass(frozen=True, slots=True)
class JobRow:
    id: int
    name: str
    slurm_id: str
    badge: view.StateBadge
    project: str
    owner: str
    cluster: str
    submitted: str
    elapsed: str
    tasks: str | None
    expected_start: str | None = None
    is_outside: bool = False


# What _row reads of a job: a page of 50 rows then loads a fifth of each job's columns.
ROW_COLUMNS = (
    "name",
    "slurm_job_id",
    "state",
    "cluster",
    "submitted_at",
    "created_at",
    "elapsed_seconds",
    "expected_start_at",
    "submitted_outside",
)


def _row(listed: repository.JobListRow) -> JobRow:
    job, total = listed.job, listed.tasks
    running, completed, ended = listed.tasks_running, listed.tasks_completed, listed.tasks_ended
    tasks = None
    if total:
        failed = (ended or 0) - (completed or 0)
        waiting = total - (ended or 0) - (running or 0)
        tasks = ngettext(
            "%(num)d task: %(completed)s completed, %(running)s running, %(waiting)s waiting, "
            "%(failed)s failed or cancelled",
            "%(num)d tasks: %(completed)s completed, %(running)s running, %(waiting)s waiting, "
            "%(failed)s failed or cancelled",
            total,
            completed=completed or 0,
            running=running or 0,
            waiting=waiting,
            failed=failed,
        )
    return JobRow(
        id=job.id,
        name=job.name,
        slurm_id=job.slurm_job_id or "—",
        badge=view.state_badge(job.state),
        project=listed.project_name,
        owner=listed.owner_login,
        cluster=job.cluster,
        submitted=view.format_time(job.submitted_at or job.created_at),
        elapsed=format_seconds(job.elapsed_seconds),
        tasks=tasks,
        expected_start=view.expected_start(job),
        is_outside=job.submitted_outside,
    )


def list_query(filters: HistoryFilters) -> ListQuery:
    """The shared job-list query for what the page's filter form says."""
    wanted: tuple[str, ...] = (filters.state,) if filters.state else ()
    if filters.active_only:
        wanted = tuple(sorted(states.ACTIVE_STATES))
    if filters.finished_only:
        wanted = tuple(sorted(states.TERMINAL_STATES))
    return ListQuery(
        states=wanted,
        project_id=filters.project_id,
        cluster=filters.cluster,
        template_id=filters.template_id,
        since=filters.since,
        until=filters.until,
        text=filters.text,
        mine_only=filters.mine_only,
    )


async def history_page(
    session: AsyncSession,
    actor: Actor,
    filters: HistoryFilters,
    before: int | None,
    limit: int = PAGE_SIZE,
) -> tuple[list[JobRow], int | None]:
    """One page of visible jobs, newest first, in a single query; array tasks folded in."""
    found, next_before = await listing.list_page(
        session, actor, list_query(filters), before, limit, ROW_COLUMNS
    )
    return [_row(listed) for listed in found], next_before


async def filter_choices(session: AsyncSession, actor: Actor) -> dict[str, Any]:
    return {
        "states": [(s, view.state_badge(s).label) for s in JOB_STATES],
        "projects": await projects.names_for_filter(session, actor),
        "templates": await job_templates.names_for_filter(session, actor),
    }


@dataclass(frozen=True, slots=True)
class TemplateLink:
    id: int
    name: str
    uses: int

    @property
    def uses_label(self) -> str:
        return ngettext("%(num)d job", "%(num)d jobs", self.uses)


async def template_links(session: AsyncSession, actor: Actor) -> dict[str, list[TemplateLink]]:
    """The templates the user submitted from most recently and most often."""
    rows = await job_templates.submitted_from(session, actor)
    links = [TemplateLink(id_, name, uses) for id_, name, uses, _ in rows]
    by_last = {id_: last for id_, _, _, last in rows}
    recent = sorted(links, key=lambda t: by_last[t.id], reverse=True)[:QUICK_LINKS]
    frequent = sorted(links, key=lambda t: (-t.uses, t.name))[:QUICK_LINKS]
    return {"recent": recent, "frequent": frequent}


@dataclass(frozen=True, slots=True)
class PartitionView:
    name: str
    state: str
    is_default: bool
    max_time: str
    default_time: str
    nodes: str
    cpus: str


@dataclass(frozen=True, slots=True)
class ClusterView:
    name: str
    is_reachable: bool
    status: str
    last_contact: str
    last_error: str | None
    partitions: tuple[PartitionView, ...] = ()
    partitions_at: str | None = None


def _limit(minutes: Any) -> str:
    return format_duration(minutes) if isinstance(minutes, int) and minutes > 0 else _("none")


def _idle(idle: Any, total: Any) -> str:
    count = idle if isinstance(idle, int) else 0
    return ngettext(
        "%(idle)s of %(total)s idle",
        "%(idle)s of %(total)s idle",
        count,
        idle=format_number(count) if isinstance(idle, int) else idle,
        total=format_number(total) if isinstance(total, int) else total,
    )


def _partition_state(state: str) -> str:
    """Slurm's partition states (sinfo's %a) in words; one it does not name is shown as is."""
    words = {
        "up": _("available"),
        "down": _("down"),
        "drain": _("draining"),
        "inact": _("inactive"),
        "inactive": _("inactive"),
    }
    return words.get(state.lower().rstrip("*"), state)


def _partition_view(record: dict[str, Any]) -> PartitionView:
    return PartitionView(
        name=str(record.get("name", "?")),
        state=_partition_state(str(record.get("state", ""))),
        is_default=bool(record.get("is_default")),
        max_time=_limit(record.get("max_minutes")),
        default_time=_limit(record.get("default_minutes")),
        nodes=_idle(record.get("idle_nodes", 0), record.get("total_nodes", 0)),
        cpus=_idle(record.get("idle_cpus", 0), record.get("total_cpus", 0)),
    )


def _cluster_view(name: str, row: ClusterStatus | None, poll_interval: float) -> ClusterView:
    if row is None or row.last_contact_at is None:
        return ClusterView(name, False, _("Not contacted yet"), _("never"), None)
    age = (datetime.now(UTC) - row.last_contact_at).total_seconds()
    is_reachable = row.consecutive_failures == 0 and age <= poll_interval * STALE_POLLS
    status = _("Reachable") if is_reachable else _("Unreachable")
    partitions = tuple(_partition_view(record) for record in row.partitions or ())
    reported = view.format_time(row.partitions_at) if row.partitions_at else None
    return ClusterView(
        name,
        is_reachable,
        status,
        view.format_time(row.last_contact_at),
        row.last_error,
        partitions,
        reported,
    )


async def cluster_views(
    session: AsyncSession, configured: list[str], poll_interval: float
) -> list[ClusterView]:
    rows = {row.cluster: row for row in await session.scalars(select(ClusterStatus))}
    names = sorted(set(configured) | set(rows))
    return [_cluster_view(name, rows.get(name), poll_interval) for name in names]


async def _live_sessions(
    session: AsyncSession, actor: Actor, definitions: Mapping[str, AppDefinition]
) -> list[Any]:
    """The actor's sessions that have not ended, as the dashboard lists them."""
    now = utc_now()
    rows = await own_sessions(session, actor, live_only=True)
    asked = await ends_asked(session, actor, rows)
    return [describe(row, definitions, now, asked) for row in rows]


@router.get("/dashboard", name="dashboard")
async def dashboard(
    request: Request,
    session: SessionDep,
    actor: CurrentUser,
    web: WebContextDep,
    definitions: AppsDep,
    cluster_names: ClusterNamesDep,
    settings: SettingsDep,
    cluster: Annotated[str, Query(max_length=64)] = "",
) -> Response:
    chosen = cluster if cluster in cluster_names else None
    mine = HistoryFilters(mine_only=True, cluster=chosen)
    running, _ = await history_page(session, actor, replace(mine, active_only=True), None)
    recent, _ = await history_page(
        session, actor, replace(mine, finished_only=True), None, RECENT_JOBS
    )
    context = {
        "user": actor,
        "running": running,
        "recent": recent,
        "polls": any(not row.badge.is_terminal for row in [*running, *recent]),
        "poll_trigger": "every 3s",
        "templates": await template_links(session, actor),
        "sessions": await _live_sessions(session, actor, definitions),
        "clusters": await cluster_views(session, list(cluster_names), settings.poll_interval),
        "cluster": chosen,
    }
    block = "dashboard_jobs" if request.query_params.get("fragment") == "jobs" else None
    if block is None:
        context["announcements"] = await announcements.shown(session, actor)
        context["projects"] = [
            (found, burndown_summary(found))
            for found in await member_burndowns(session, actor, utc_now().date())
        ]
    return page(request, web, "dashboard/index.html", context, block=block)
