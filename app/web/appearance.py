"""The colour scheme: the browser's (prefers-color-scheme) by default, or the user's own.

The choice is stored with the user and written into the page's ``<html data-theme>`` by
the server, so the page is drawn in its scheme from the first paint, without a script.
"""

from __future__ import annotations

from fastapi import Request
from fastapi.responses import Response

from app.deps import SessionDep
from app.i18n import _
from app.users import service as users
from app.web.auth import CurrentUser, WebContextDep, csrf_protected_router
from app.web.views import page

router = csrf_protected_router()
THEMES = ("light", "dark")


def _choices() -> list[tuple[str, str]]:
    return [("", _("As the browser asks")), ("light", _("Light")), ("dark", _("Dark"))]


@router.get("/settings/appearance", name="appearance_settings")
async def appearance_page(request: Request, actor: CurrentUser, web: WebContextDep) -> Response:
    values = {"choices": _choices(), "chosen": actor.theme or "", "saved": False}
    return page(request, web, "settings/appearance.html", values)


@router.post("/settings/appearance")
async def save_appearance(
    request: Request, actor: CurrentUser, web: WebContextDep, session: SessionDep
) -> Response:
    chosen = str((await request.form()).get("theme", ""))
    theme = chosen if chosen in THEMES else None
    await users.set_theme(session, actor, theme)
    # The page that confirms it is already drawn in the scheme just chosen.
    request.state.theme = theme
    values = {"choices": _choices(), "chosen": theme or "", "saved": True}
    return page(request, web, "settings/appearance.html", values)
