"""/usage: usage by project, user or partition over time, efficiency and limits."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Annotated, Any

from fastapi import Query, Request
from fastapi.responses import Response
from sqlalchemy.ext.asyncio import AsyncSession

from app.deps import ClusterNamesDep, SessionDep
from app.i18n import _
from app.jobs import listing
from app.models.base import utc_now
from app.reports import efficiency, limits
from app.reports.chart import chart_series, render_svg
from app.reports.usage import CSV_DOWNLOAD_HEADERS, METRICS, UsageQuery, usage_csv, usage_report
from app.templating import render
from app.users.actor import Actor
from app.web import usage_views as views
from app.web.admin_common import page_context
from app.web.auth import CurrentUser, WebContextDep, csrf_protected_router

router = csrf_protected_router()


# Wasteful jobs listed a page at a time.
WASTE_PAGE = 10


def _units() -> dict[str, str]:
    """The charted metrics and their units, in the reader's language."""
    return {"cpu_hours": _("CPU-hours"), "gpu_hours": _("GPU-hours"), "mem_gb_hours": _("GB-hours")}


def _query(
    start: date | None,
    end: date | None,
    group_by: str,
    period: str,
    sort: str,
    order: str,
    cluster: str | None = None,
) -> UsageQuery:
    today = utc_now().date()
    return UsageQuery(
        start=start or today - timedelta(days=29),
        end=end or today,
        group_by=group_by,  # type: ignore[arg-type]
        period=period,  # type: ignore[arg-type]
        sort=sort,
        descending=order != "asc",
        cluster=cluster,
    )


@router.get("/usage", name="usage")
async def usage_page(
    request: Request,
    actor: CurrentUser,
    web: WebContextDep,
    session: SessionDep,
    names: ClusterNamesDep,
    start: Annotated[date | None, Query()] = None,
    end: Annotated[date | None, Query()] = None,
    group_by: str = "project",
    period: str = "day",
    metric: str = "cpu_hours",
    sort: str = "cpu_hours",
    order: str = "desc",
    format: str = "html",
    cluster: Annotated[str, Query(max_length=64)] = "",
    waste_page: Annotated[int, Query(ge=1, le=1000)] = 1,
) -> Response:
    chosen = cluster if cluster in names else None
    query = _query(start, end, group_by, period, sort, order, chosen)
    report = await usage_report(session, actor, query)
    if format == "csv":
        return Response(usage_csv(report), media_type="text/csv", headers=CSV_DOWNLOAD_HEADERS)
    units = _units()
    metric = metric if metric in units else "cpu_hours"
    svg = render_svg(report.periods, chart_series(report, metric), units[metric])
    context = page_context(
        web,
        report=report,
        query=report.query,
        metric=metric,
        metrics=METRICS,
        units=units,
        clusters=names,
        chart=svg,
        series=chart_series(report, metric),
        limits=await limits.limit_statuses(session, actor, utc_now().date()),
        **await _efficiency(session, actor, query, waste_page),
    )
    return render(request, "usage/index.html", context)


async def _efficiency(
    session: AsyncSession, actor: Actor, query: UsageQuery, waste_page: int
) -> dict[str, Any]:
    """Efficiency per user and project, and a page of the wasteful jobs (newest first)
    linked to their pages: the whole list would bury the chart a manager came for."""
    start, end = query.start, query.end
    by_user = await efficiency.efficiency_by(session, actor, "user", start, end)
    by_project = await efficiency.efficiency_by(session, actor, "project", start, end)
    found = await efficiency.wasteful_jobs(session, actor, start, end)
    first = (waste_page - 1) * WASTE_PAGE
    wasteful = found[first : first + WASTE_PAGE]
    ids = await listing.portal_ids(
        session, actor, ((w.row.cluster, w.row.job_id) for w in wasteful)
    )
    return {
        "by_user": views.efficiency_rows(by_user),
        "by_project": views.efficiency_rows(by_project),
        "wasteful": views.wasteful_rows(wasteful, ids),
        "waste": views.waste_paging(waste_page, WASTE_PAGE, len(wasteful), len(found)),
    }
