"""GrpTRESMins limits next to the usage measured for them, and when they run out."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

from sqlalchemy import and_, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.models.projects import Project
from app.models.usage import AssociationLimit, UsageDaily
from app.reports.usage import visible_project_ids
from app.users.actor import Actor

RATE_WINDOW_DAYS = 7
_USAGE_COLUMN = {"cpu": UsageDaily.cpu_seconds, "gres/gpu": UsageDaily.gpu_seconds}


@dataclass(frozen=True, slots=True)
class LimitStatus:
    project: str
    account: str
    user_name: str
    tres: str
    limit_minutes: int
    used_minutes: float
    runs_out_on: date | None
    project_id: int | None = None

    @property
    def used_fraction(self) -> float:
        return self.used_minutes / self.limit_minutes if self.limit_minutes else 1.0


def runs_out_on(
    limit: float, used: float, recent: float, window_days: int, today: date
) -> date | None:
    """The day usage reaches ``limit`` if it goes on at the rate of the last ``window_days``
    (``recent`` used in them); None when nothing is being used. Already over: today."""
    if used >= limit:
        return today
    if recent <= 0 or window_days <= 0:
        return None
    per_day = recent / window_days
    return today + timedelta(days=int((limit - used) // per_day))


async def _used_minutes(
    session: AsyncSession, limit: AssociationLimit, since: date | None, today: date
) -> float:
    column = _USAGE_COLUMN[limit.tres]
    statement = select(func.coalesce(func.sum(column), 0)).where(
        UsageDaily.cluster == limit.cluster,
        UsageDaily.account == limit.account,
        UsageDaily.day <= today,
    )
    if limit.user_name:
        statement = statement.where(UsageDaily.user_name == limit.user_name)
    if since is not None:
        statement = statement.where(UsageDaily.day > since)
    return float(await session.scalar(statement) or 0) / 60


async def limit_statuses(session: AsyncSession, actor: Actor, today: date) -> list[LimitStatus]:
    """Limits on CPU and GPU minutes of the projects the actor may see.

    Used = everything ingested for the association. Slurm itself may decay usage
    (PriorityDecayHalfLife) or reset it, so this is an upper bound on what Slurm counts.
    """
    project_ids = await visible_project_ids(session, actor)
    statement = (
        select(AssociationLimit, Project.name, Project.id)
        .join(
            Project,
            and_(
                Project.cluster == AssociationLimit.cluster,
                Project.slurm_account == AssociationLimit.account,
            ),
        )
        .where(AssociationLimit.tres.in_(list(_USAGE_COLUMN)))
        .order_by(Project.name, AssociationLimit.user_name, AssociationLimit.tres)
    )
    if project_ids is not None:
        statement = statement.where(Project.id.in_(project_ids))
    statuses = []
    window_start = today - timedelta(days=RATE_WINDOW_DAYS)
    for limit, project, project_id in (await session.execute(statement)).all():
        used = await _used_minutes(session, limit, None, today)
        recent = await _used_minutes(session, limit, window_start, today)
        run_out = runs_out_on(limit.minutes, used, recent, RATE_WINDOW_DAYS, today)
        statuses.append(
            LimitStatus(
                project,
                limit.account,
                limit.user_name,
                limit.tres,
                limit.minutes,
                used,
                run_out,
                project_id,
            )
        )
    return statuses
