"""The interface's language: the browser's by default, the user's own setting once saved.

``LocaleMiddleware`` picks the browser's language for every request, so signed-out pages
and error pages speak it too; ``get_web_context`` then applies a signed-in user's setting.
"""

from __future__ import annotations

from fastapi import Request
from fastapi.responses import Response
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from app import i18n
from app.deps import SessionDep
from app.i18n import _
from app.users import service as users
from app.web.auth import CurrentUser, WebContextDep, csrf_protected_router
from app.web.views import page

router = csrf_protected_router()
# The empty value means "follow the browser".
BROWSER = ""


class LocaleMiddleware:
    """Speak the browser's language (``Accept-Language``) for the rest of the request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        locale = i18n.negotiate(Headers(scope=scope).get("accept-language"))
        with i18n.use_locale(locale):
            await self.app(scope, receive, send)


def _choices() -> list[tuple[str, str]]:
    return [(BROWSER, _("The browser's language")), *i18n.LANGUAGES.items()]


@router.get("/settings/language", name="language_settings")
async def language_page(request: Request, actor: CurrentUser, web: WebContextDep) -> Response:
    values = {"choices": _choices(), "chosen": actor.locale or BROWSER, "saved": False}
    return page(request, web, "settings/language.html", values)


@router.post("/settings/language")
async def save_language(
    request: Request, actor: CurrentUser, web: WebContextDep, session: SessionDep
) -> Response:
    chosen = str((await request.form()).get("locale", BROWSER))
    locale = chosen if chosen in i18n.LANGUAGES else None
    await users.set_locale(session, actor, locale)
    # The page that confirms it already speaks the language just chosen.
    i18n.set_locale(locale or i18n.negotiate(request.headers.get("accept-language")))
    values = {"choices": _choices(), "chosen": locale or BROWSER, "saved": True}
    return page(request, web, "settings/language.html", values)
