"""Announcements on the web: dismissing one, and the administrators' page to post them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated
from urllib.parse import urlsplit

from fastapi import Form, Request
from fastapi.responses import Response

from app.announcements import service as announcements
from app.deps import SessionDep
from app.errors import ValidationFailed
from app.i18n import _
from app.params import PathId
from app.templating import is_htmx, render
from app.web.admin_common import SiteAdmin, page_context, web_origin
from app.web.auth import CurrentUser, WebContextDep, csrf_protected_router
from app.web.views import redirect, safe_next

router = csrf_protected_router()
FormText = Annotated[str, Form()]


@router.post("/announcements/{announcement_id:int}/dismiss", name="dismiss_announcement")
async def dismiss(
    request: Request, actor: CurrentUser, session: SessionDep, announcement_id: PathId
) -> Response:
    await announcements.dismiss(session, actor, announcement_id)
    if is_htmx(request):
        return Response(status_code=200)  # the banner item is swapped for nothing
    back = request.headers.get("referer", "")
    return redirect(request, safe_next(_same_site_path(back), "/dashboard"))


def _same_site_path(url: str) -> str:
    """The path (and query) of a Referer, which ``safe_next`` then checks."""
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def _moment(text: str, field: str) -> datetime | None:
    """A ``datetime-local`` value, read as UTC (the form says so)."""
    if not text.strip():
        return None
    try:
        return datetime.fromisoformat(text.strip()).replace(tzinfo=UTC)
    except ValueError:
        message = _("Use a date and time such as 2026-12-01 08:00.")
        raise ValidationFailed(message, {field: message}) from None


async def _page(
    request: Request, web: WebContextDep, session: SessionDep, actor: SiteAdmin, **values: object
) -> Response:
    listed = await announcements.list_for_admin(session, actor)
    context = page_context(web, announcements=listed, **values)
    return render(request, "admin/announcements.html", context)


@router.get("/admin/announcements", name="admin_announcements")
async def admin_page(
    request: Request, actor: SiteAdmin, web: WebContextDep, session: SessionDep
) -> Response:
    return await _page(request, web, session, actor, values={}, errors={})


@router.post("/admin/announcements", name="admin_post_announcement")
async def post(
    request: Request,
    actor: SiteAdmin,
    web: WebContextDep,
    session: SessionDep,
    body: FormText = "",
    shown_from: FormText = "",
    shown_until: FormText = "",
    is_dismissible: Annotated[bool, Form()] = False,
) -> Response:
    values = {
        "body": body,
        "shown_from": shown_from,
        "shown_until": shown_until,
        "is_dismissible": is_dismissible,
    }
    try:
        draft = announcements.Draft(
            body,
            _moment(shown_from, "shown_from"),
            _moment(shown_until, "shown_until"),
            is_dismissible,
        )
        await announcements.post(session, actor, draft, web_origin(request))
    except ValidationFailed as error:
        errors = error.fields or {"body": error.detail}
        return await _page(request, web, session, actor, values=values, errors=errors)
    return redirect(request, "/admin/announcements")


@router.post("/admin/announcements/{announcement_id:int}/delete", name="admin_delete_announcement")
async def withdraw(
    request: Request, actor: SiteAdmin, session: SessionDep, announcement_id: PathId
) -> Response:
    await announcements.withdraw(session, actor, announcement_id, web_origin(request))
    return redirect(request, "/admin/announcements")
