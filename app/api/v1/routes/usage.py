"""GET /api/v1/usage: the usage report as JSON or CSV, from the same service as /usage.

What a caller sees follows the token, not only the person: a manager's ``read`` token covers
the projects they manage, and the all-projects view needs a site administrator's token with
the ``admin`` scope (without it, an administrator is treated as a plain user).
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Annotated, Literal, get_args

from fastapi import APIRouter, Query
from fastapi.responses import Response

from app.api.v1.deps import Reader
from app.api.v1.schemas import errors
from app.api.v1.usage_schemas import UsageOut, usage_out
from app.deps import SessionDep
from app.models.base import utc_now
from app.reports.usage import CSV_DOWNLOAD_HEADERS, METRICS, GroupBy, Period, UsageQuery, usage_csv
from app.reports.usage import usage_report as build_report

router = APIRouter(prefix="/usage", tags=["usage"])
DEFAULT_DAYS = 30
Sort = Literal[
    "group",
    "cpu_hours",
    "gpu_hours",
    "mem_gb_hours",
    "jobs_total",
    "jobs_completed",
    "jobs_failed",
    "jobs_cancelled",
    "jobs_timeout",
    "jobs_other",
]
assert set(METRICS) | {"group"} == set(get_args(Sort)), "Sort must list every metric"


def _query(
    start: date | None,
    end: date | None,
    group_by: GroupBy,
    period: Period,
    sort: str,
    order: str,
    cluster: str | None = None,
) -> UsageQuery:
    today = utc_now().date()
    return UsageQuery(
        start=start or today - timedelta(days=DEFAULT_DAYS - 1),
        end=end or today,
        group_by=group_by,
        period=period,
        sort=sort,
        descending=order == "desc",
        cluster=cluster,
    )


CSV_CONTENT = {"schema": {"type": "string"}, "example": "group,period,cpu_hours,...\n"}


@router.get(
    "",
    response_model=UsageOut,
    summary="Usage of the projects you manage (all projects with an admin token)",
    responses=errors(400) | {200: {"content": {"text/csv": CSV_CONTENT}}},
)
async def get_usage_report(
    session: SessionDep,
    principal: Reader,
    start: Annotated[date | None, Query(description="First day (default: 29 days ago)")] = None,
    end: Annotated[date | None, Query(description="Last day, inclusive (default: today)")] = None,
    group_by: GroupBy = "project",
    period: Period = "day",
    sort: Sort = "cpu_hours",
    order: Literal["asc", "desc"] = "desc",
    format: Annotated[Literal["json", "csv"], Query(description="csv: one row a cell")] = "json",
    cluster: Annotated[
        str | None, Query(max_length=64, description="Only this cluster's usage")
    ] = None,
) -> UsageOut | Response:
    query = _query(start, end, group_by, period, sort, order, cluster)
    report = await build_report(session, principal.actor, query)
    if format == "csv":
        return Response(usage_csv(report), media_type="text/csv", headers=CSV_DOWNLOAD_HEADERS)
    return usage_out(report)
