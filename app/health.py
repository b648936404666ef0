"""``/healthz``: database reachability and what the poller last saw of each cluster."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from sqlalchemy import select, text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession

from app.deps import ClusterNamesDep, SessionmakerDep, TaskBoardDep
from app.models.clusters import ClusterStatus
from app.web.proxies import is_operations_request

logger = logging.getLogger(__name__)
router = APIRouter()


def describe_cluster(status: ClusterStatus | None) -> dict[str, Any]:
    """A cluster counts as reachable once contacted and not failing since."""
    if status is None:
        return {"last_contact_at": None, "reachable": False, "last_error": None}
    is_reachable = status.last_contact_at is not None and status.consecutive_failures == 0
    return {
        "last_contact_at": status.last_contact_at.isoformat() if status.last_contact_at else None,
        "reachable": is_reachable,
        "last_error": status.last_error,
    }


async def read_cluster_statuses(session: AsyncSession) -> dict[str, ClusterStatus]:
    await session.execute(text("SELECT 1"))
    rows = await session.scalars(select(ClusterStatus))
    return {row.cluster: row for row in rows}


@router.get("/healthz", include_in_schema=False)
async def healthz(
    request: Request,
    sessionmaker: SessionmakerDep,
    cluster_names: ClusterNamesDep,
    task_board: TaskBoardDep,
) -> JSONResponse:
    """``{"status": "ok"}`` for anyone (load balancers); the database, each cluster's last
    contact and error, and the background tasks' failures only for operations networks,
    since they describe the site."""
    configured = list(cluster_names)
    try:
        async with sessionmaker() as session:
            statuses = await read_cluster_statuses(session)
    except (SQLAlchemyError, OSError):
        logger.warning("health check: database unavailable", exc_info=True)
        details = is_operations_request(request)
        body = {"database": "error", "clusters": {}} if details else {"status": "error"}
        return JSONResponse(body, status_code=503)
    if not is_operations_request(request):
        return JSONResponse({"status": "ok"})
    names = sorted(set(configured) | set(statuses))
    clusters = {name: describe_cluster(statuses.get(name)) for name in names}
    # This process's supervised tasks (the poller's, when it runs here): a task that failed
    # says why and whether it runs again, where a dead one used to go unnoticed.
    tasks = task_board.describe()
    return JSONResponse({"database": "ok", "clusters": clusters, "tasks": tasks})
