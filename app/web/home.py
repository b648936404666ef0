"""The welcome page at ``/``, for visitors; signed-in researchers go to their dashboard."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from app.deps import ClusterNamesDep
from app.templating import render
from app.web.auth import WebContextDep

router = APIRouter(include_in_schema=False)


@router.get("/")
async def home(request: Request, context: WebContextDep, clusters: ClusterNamesDep) -> Response:
    # Signed-in researchers land on their own jobs; the welcome page is for visitors.
    if context.actor is not None:
        return RedirectResponse(request.url_for("dashboard"), status_code=303)
    return render(request, "home.html", {"clusters": clusters})
