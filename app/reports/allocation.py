"""A project's allocation of CPU minutes, its use day by day, and when it runs out.

The allocation is the scheduler's own limit where it has one (Slurm's GrpTRESMins on the
project's account, read by the poller), otherwise the one an administrator entered. Use is
every CPU minute ingested from accounting for the account; Slurm may decay or reset its own
count, so this is the upper bound of what Slurm holds against the limit.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import Forbidden, NotFound
from app.i18n import _
from app.jobs.requests import JobRequest
from app.models.allocations import ProjectAllocation
from app.models.projects import Project
from app.models.usage import AssociationLimit, UsageDaily
from app.reports.limits import RATE_WINDOW_DAYS, runs_out_on
from app.scheduler.directive_values import array_tasks
from app.users.actor import Actor

CHART_DAYS = 30
THRESHOLDS = (80, 95)
SCHEDULER, ADMINISTRATOR = "scheduler", "administrator"


@dataclass(frozen=True, slots=True)
class Burndown:
    project: Project
    limit_minutes: int | None
    source: str | None
    """Where the allocation comes from: ``scheduler`` or ``administrator``; None: none."""
    used_minutes: float
    per_day: float
    """CPU minutes a day over the last RATE_WINDOW_DAYS days: the current rate."""
    runs_out_on: date | None
    days: tuple[tuple[date, float], ...]
    """Cumulative use at the end of each of the last CHART_DAYS days."""

    @property
    def remaining_minutes(self) -> float | None:
        if self.limit_minutes is None:
            return None
        return max(0.0, self.limit_minutes - self.used_minutes)

    @property
    def used_fraction(self) -> float | None:
        if not self.limit_minutes:
            return None
        return self.used_minutes / self.limit_minutes


async def allocation_of(session: AsyncSession, project: Project) -> tuple[int | None, str | None]:
    """The project's CPU-minute allocation and where it comes from."""
    limit = await session.scalar(
        select(AssociationLimit.minutes).where(
            AssociationLimit.cluster == project.cluster,
            AssociationLimit.account == project.slurm_account,
            AssociationLimit.user_name == "",
            AssociationLimit.tres == "cpu",
        )
    )
    if limit is not None:
        return int(limit), SCHEDULER
    entered = await session.get(ProjectAllocation, project.id)
    if entered is not None:
        return entered.cpu_minutes, ADMINISTRATOR
    return None, None


async def _daily_minutes(session: AsyncSession, project: Project, today: date) -> dict[date, float]:
    rows = await session.execute(
        select(UsageDaily.day, func.sum(UsageDaily.cpu_seconds))
        .where(
            UsageDaily.cluster == project.cluster,
            UsageDaily.account == project.slurm_account,
            UsageDaily.day <= today,
        )
        .group_by(UsageDaily.day)
    )
    return {day: float(seconds or 0) / 60 for day, seconds in rows.all()}


async def burndown(session: AsyncSession, project: Project, today: date) -> Burndown:
    limit, source = await allocation_of(session, project)
    daily = await _daily_minutes(session, project, today)
    used = sum(daily.values())
    start = today - timedelta(days=CHART_DAYS - 1)
    running = sum(minutes for day, minutes in daily.items() if day < start)
    days = []
    for offset in range(CHART_DAYS):
        day = start + timedelta(days=offset)
        running += daily.get(day, 0.0)
        days.append((day, running))
    window = today - timedelta(days=RATE_WINDOW_DAYS)
    recent = sum(minutes for day, minutes in daily.items() if day > window)
    run_out = runs_out_on(limit, used, recent, RATE_WINDOW_DAYS, today) if limit else None
    return Burndown(project, limit, source, used, recent / RATE_WINDOW_DAYS, run_out, tuple(days))


async def project_burndown(
    session: AsyncSession, actor: Actor, project_id: int, today: date
) -> Burndown:
    """The burn-down of a project the actor belongs to (any project for a site admin)."""
    project = await session.get(Project, project_id)
    if project is None or not (actor.is_site_admin or actor.is_member_of(project_id)):
        raise NotFound(_("No such project."))
    return await burndown(session, project, today)


async def member_burndowns(session: AsyncSession, actor: Actor, today: date) -> list[Burndown]:
    """The burn-downs of the open projects the actor is a member of, by name."""
    if not actor.project_roles:
        return []
    found = await session.scalars(
        select(Project)
        .where(Project.id.in_(actor.project_roles), Project.is_active)
        .order_by(Project.name, Project.cluster)
    )
    return [await burndown(session, project, today) for project in found]


def requested_minutes(request: JobRequest) -> int | None:
    """The CPU minutes a request may use at most (its time limit on every CPU it asks for, in
    every array task); None when its time limit is the partition's default, unknown here."""
    if request.time_limit_minutes is None:
        return None
    cpus = max((request.ntasks or 1) * (request.cpus_per_task or 1), request.nodes or 1)
    try:
        tasks = array_tasks(request.array_spec) if request.array_spec else 1
    except ValueError:
        return None  # the submission's own check refuses the range, in its words
    return request.time_limit_minutes * cpus * tasks


async def allocation_warning(
    session: AsyncSession, project: Project, request: JobRequest, today: date
) -> str | None:
    """Words for a request that would not fit what is left of the project's allocation."""
    asked = requested_minutes(request)
    if asked is None:
        return None
    found = await burndown(session, project, today)
    left = found.remaining_minutes
    if left is None or asked <= left:
        return None
    return _(
        "This job may use up to %(asked)s CPU minutes, but project %(project)s has only "
        "%(left)s left of its allocation of %(limit)s: Slurm may keep it waiting or stop it "
        "once the allocation is used up. Ask for less time or fewer CPUs, or ask a manager "
        "for more.",
        asked=f"{asked:,}",
        project=project.name,
        left=f"{left:,.0f}",
        limit=f"{found.limit_minutes:,}",
    )


async def set_allocation(
    session: AsyncSession, actor: Actor, project_id: int, cpu_minutes: int | None
) -> None:
    """A site administrator enters (or, with None, removes) a project's allocation; the
    scheduler's own limit, where it has one, still comes first."""
    if not actor.is_site_admin:
        raise Forbidden(_("Only site administrators set allocations."))
    if await session.get(Project, project_id) is None:
        raise NotFound(_("No such project."))
    entered = await session.get(ProjectAllocation, project_id)
    if cpu_minutes is None:
        if entered is not None:
            await session.delete(entered)
        return
    if entered is None:
        entered = ProjectAllocation(project_id=project_id, cpu_minutes=cpu_minutes)
        session.add(entered)
    entered.cpu_minutes = cpu_minutes
    entered.set_by_user_id = actor.user_id
    await session.flush()
