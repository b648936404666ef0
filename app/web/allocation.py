"""/projects/{id}/allocation: a project's allocation, its burn-down chart and when it runs out;
site administrators enter an allocation where the scheduler holds none."""

from __future__ import annotations

from fastapi import Request
from fastapi.responses import Response

from app.deps import SessionDep
from app.errors import ValidationFailed
from app.i18n import _
from app.models.base import utc_now
from app.params import PathId
from app.reports import allocation
from app.reports.burndown_chart import minutes, render_burndown, summary
from app.users.actor import Actor
from app.web.auth import CurrentUser, WebContext, WebContextDep, csrf_protected_router
from app.web.views import page, redirect

router = csrf_protected_router()


async def _page(
    request: Request,
    session: SessionDep,
    web: WebContext,
    actor: Actor,
    project_id: int,
    error: str | None = None,
) -> Response:
    found = await allocation.project_burndown(session, actor, project_id, utc_now().date())
    context = {
        "found": found,
        "chart": render_burndown(found),
        "summary": summary(found),
        "minutes": minutes,
        "error": error,
    }
    status = 422 if error else 200
    return page(request, web, "usage/allocation.html", context, status_code=status)


@router.get("/projects/{project_id:int}/allocation", name="project_allocation")
async def allocation_page(
    request: Request,
    session: SessionDep,
    web: WebContextDep,
    actor: CurrentUser,
    project_id: PathId,
) -> Response:
    return await _page(request, session, web, actor, project_id)


@router.post("/projects/{project_id:int}/allocation", name="project_allocation_set")
async def set_allocation(
    request: Request,
    session: SessionDep,
    web: WebContextDep,
    actor: CurrentUser,
    project_id: PathId,
) -> Response:
    text = str((await request.form()).get("cpu_minutes", "")).strip().replace(",", "")
    if text and not (text.isdigit() and int(text) > 0):
        error = _("Give the allocation as a whole number of CPU minutes, or leave it empty.")
        return await _page(request, session, web, actor, project_id, error)
    try:
        await allocation.set_allocation(session, actor, project_id, int(text) if text else None)
    except ValidationFailed as failure:
        return await _page(request, session, web, actor, project_id, failure.detail)
    return redirect(request, f"/projects/{project_id}/allocation")
