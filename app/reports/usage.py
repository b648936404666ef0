"""The usage report: totals from the daily rollups, scoped to what the actor may see.

Site administrators see every project, managers the projects they manage; nobody else
sees usage. Raw accounting rows are never read here, only ``usage_daily``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from typing import Any, Literal

from sqlalchemy import Date, Select, and_, cast, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import Forbidden, ValidationFailed
from app.i18n import _
from app.models.projects import Project
from app.models.usage import UsageDaily
from app.models.users import User, UserClusterAccount
from app.reports.csv_export import write_csv
from app.users.actor import Actor
from app.vocabulary.days import FIRST_DAY, LAST_DAY, is_plausible_day

GroupBy = Literal["project", "user", "partition", "cluster"]
Period = Literal["day", "week", "month"]
GROUPS: tuple[GroupBy, ...] = ("project", "user", "partition", "cluster")
PERIODS: tuple[Period, ...] = ("day", "week", "month")
METRICS = (
    "cpu_hours",
    "gpu_hours",
    "mem_gb_hours",
    "jobs_total",
    "jobs_completed",
    "jobs_failed",
    "jobs_cancelled",
    "jobs_timeout",
    "jobs_other",
)
MAX_DAYS = 3660


@dataclass(frozen=True, slots=True)
class UsageQuery:
    start: date
    end: date
    group_by: GroupBy = "project"
    period: Period = "day"
    sort: str = "cpu_hours"
    descending: bool = True
    cluster: str | None = None

    def checked(self) -> UsageQuery:
        for name in ("start", "end"):
            if not is_plausible_day(getattr(self, name)):
                shown = _(
                    "must be between %(first)s and %(last)s",
                    first=FIRST_DAY.isoformat(),
                    last=LAST_DAY.isoformat(),
                )
                raise ValidationFailed(fields={name: shown})
        if self.end < self.start:
            raise ValidationFailed(fields={"end": _("must not be before the start")})
        if (self.end - self.start).days > MAX_DAYS:
            raise ValidationFailed(fields={"start": _("the range is limited to ten years")})
        if self.group_by not in GROUPS or self.period not in PERIODS:
            raise ValidationFailed(fields={"group_by": _("unknown grouping")})
        if self.sort not in (*METRICS, "group"):
            return replace(self, sort="cpu_hours")
        return self


@dataclass(slots=True)
class Figures:
    cpu_hours: float = 0.0
    gpu_hours: float = 0.0
    mem_gb_hours: float = 0.0
    jobs_total: int = 0
    jobs_completed: int = 0
    jobs_failed: int = 0
    jobs_cancelled: int = 0
    jobs_timeout: int = 0
    jobs_other: int = 0

    def add(self, other: Figures) -> None:
        for name in METRICS:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def value(self, metric: str) -> float:
        return float(getattr(self, metric))


@dataclass(frozen=True, slots=True)
class UsageCell:
    group: str
    period: str
    figures: Figures


@dataclass(slots=True)
class UsageReport:
    query: UsageQuery
    cells: list[UsageCell]
    totals: list[tuple[str, Figures]] = field(default_factory=list)
    periods: list[str] = field(default_factory=list)
    grand_total: Figures = field(default_factory=Figures)


async def visible_project_ids(session: AsyncSession, actor: Actor) -> list[int] | None:
    """None means every project (site administrators); managers get their projects."""
    if actor.is_site_admin:
        return None
    managed = [pid for pid, role in actor.project_roles.items() if role == "manager"]
    if not managed:
        raise Forbidden(_("Usage reports are for site administrators and project managers."))
    return managed


def _period_label(session: AsyncSession, period: Period) -> Any:
    column = UsageDaily.day
    if session.get_bind().dialect.name == "postgresql":
        bucket = column if period == "day" else cast(func.date_trunc(period, column), Date)
        return func.to_char(bucket, "YYYY-MM-DD")
    if period == "week":
        return func.date(column, "weekday 0", "-6 days")
    if period == "month":
        return func.strftime("%Y-%m-01", column)
    return func.date(column)


_GROUP_COLUMNS = {
    "project": Project.name,
    # A person mapped to different usernames on different clusters is one row, by login;
    # an account no portal user is mapped to keeps its cluster username.
    "user": func.coalesce(User.login, UsageDaily.user_name),
    "partition": UsageDaily.partition,
    "cluster": UsageDaily.cluster,
}


def _aggregates() -> list[Any]:
    u = UsageDaily
    return [
        func.sum(u.cpu_seconds),
        func.sum(u.gpu_seconds),
        func.sum(u.mem_mb_seconds),
        func.sum(u.jobs_total),
        func.sum(u.jobs_completed),
        func.sum(u.jobs_failed),
        func.sum(u.jobs_cancelled),
        func.sum(u.jobs_timeout),
        func.sum(u.jobs_other),
    ]


def _figures(values: Sequence[Any]) -> Figures:
    cpu, gpu, mem, *counts = (int(v or 0) for v in values)
    return Figures(cpu / 3600, gpu / 3600, mem / 1024 / 3600, *counts)


async def usage_report(session: AsyncSession, actor: Actor, wanted: UsageQuery) -> UsageReport:
    """Figures per group and period over ``[start, end]`` (whole UTC days)."""
    query = wanted.checked()
    project_ids = await visible_project_ids(session, actor)
    group = _GROUP_COLUMNS[query.group_by]
    label = _period_label(session, query.period)
    joined = and_(
        Project.cluster == UsageDaily.cluster, Project.slurm_account == UsageDaily.account
    )
    statement = (
        select(group, label, *_aggregates())
        .join(Project, joined)
        .where(UsageDaily.day >= query.start, UsageDaily.day <= query.end)
        .group_by(group, label)
    )
    if query.group_by == "user":
        statement = _with_logins(statement)
    if project_ids is not None:
        statement = statement.where(Project.id.in_(project_ids))
    if query.cluster is not None:
        statement = statement.where(UsageDaily.cluster == query.cluster)
    rows = (await session.execute(statement)).all()
    cells = [UsageCell(str(row[0]), str(row[1]), _figures(row[2:])) for row in rows]
    return _summarised(query, cells)


def _with_logins(statement: Select[Any]) -> Select[Any]:
    """Each row's portal user, found by the username they have on its cluster."""
    account = and_(
        UserClusterAccount.cluster == UsageDaily.cluster,
        UserClusterAccount.username == UsageDaily.user_name,
    )
    return statement.outerjoin(UserClusterAccount, account).outerjoin(
        User, User.id == UserClusterAccount.user_id
    )


def _summarised(query: UsageQuery, cells: list[UsageCell]) -> UsageReport:
    totals: dict[str, Figures] = defaultdict(Figures)
    grand = Figures()
    for cell in cells:
        totals[cell.group].add(cell.figures)
        grand.add(cell.figures)
    report = UsageReport(query, cells, grand_total=grand)
    report.periods = period_labels(query.start, query.end, query.period)
    report.totals = sort_totals(list(totals.items()), query.sort, query.descending)
    return report


def sort_totals(
    totals: list[tuple[str, Figures]], sort: str, descending: bool
) -> list[tuple[str, Figures]]:
    if sort == "group":
        return sorted(totals, key=lambda item: item[0], reverse=descending)
    return sorted(totals, key=lambda item: (item[1].value(sort), item[0]), reverse=descending)


def period_start(day: date, period: Period) -> date:
    if period == "week":
        return day - timedelta(days=day.weekday())
    if period == "month":
        return day.replace(day=1)
    return day


def period_labels(start: date, end: date, period: Period) -> list[str]:
    """Every period touching ``[start, end]``, so empty periods still get a (zero) bar."""
    labels: list[str] = []
    day = period_start(start, period)
    while day <= end:
        labels.append(day.isoformat())
        if period == "month":
            day = (day.replace(day=28) + timedelta(days=4)).replace(day=1)
        else:
            day += timedelta(days=7 if period == "week" else 1)
    return labels


CSV_HEADER = ("group", "period", *METRICS)


def csv_rows(report: UsageReport) -> list[list[object]]:
    ordered = sorted(report.cells, key=lambda cell: (cell.group, cell.period))
    return [
        [cell.group, cell.period, *(_rounded(cell.figures, name) for name in METRICS)]
        for cell in ordered
    ]


def _rounded(figures: Figures, metric: str) -> object:
    value = getattr(figures, metric)
    return round(value, 4) if isinstance(value, float) else value


CSV_DOWNLOAD_HEADERS = {"Content-Disposition": 'attachment; filename="usage.csv"'}


def usage_csv(report: UsageReport) -> str:
    """The report as the CSV both the usage page and the API offer: one row a cell."""
    return write_csv(CSV_HEADER, csv_rows(report))
