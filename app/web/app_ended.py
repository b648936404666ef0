"""What a session's own host shows once the session is over: a page of the portal's saying
so, with Relaunch, instead of the app's own errors ("Directory not found") or a bare 404.

Only a page load gets it; the app's own background requests still get a plain refusal.
"""

from __future__ import annotations

import uuid

from markupsafe import Markup, escape
from sqlalchemy import select
from starlette.requests import Request
from starlette.responses import HTMLResponse

from app.i18n import _, current_locale
from app.interactive.definitions import AppDefinition
from app.interactive.sessions import state_of
from app.models.interactive import InteractiveSession
from app.web import app_credentials as credentials
from app.wiring import services_of

PAGE = Markup(
    '<!doctype html>\n<html lang="{lang}">\n<head><meta charset="utf-8">'
    '<meta name="viewport" content="width=device-width, initial-scale=1">'
    "<title>{title}</title></head>\n"
    "<body><main><h1>{title}</h1><p>{why}</p>{links}</main></body>\n</html>\n"
)


def is_page_load(request: Request) -> bool:
    """A browser loading a page, as opposed to an app's script fetching data."""
    mode = request.headers.get("sec-fetch-mode")
    if mode is not None:
        return mode == "navigate"
    return request.method == "GET" and "text/html" in request.headers.get("accept", "")


async def _session(request: Request, session_hex: str, user_id: int) -> InteractiveSession | None:
    services = services_of(request.app)
    query = select(InteractiveSession).where(
        InteractiveSession.uuid == str(uuid.UUID(session_hex)),
        InteractiveSession.owner_user_id == user_id,
    )
    async with services.sessionmaker() as session:
        return (await session.scalars(query)).unique().one_or_none()


def _links(home: str | None, row: InteractiveSession) -> Markup:
    if home is None:
        return Markup("<p>{}</p>").format(_("Open Interactive apps in the portal to relaunch it."))
    relaunch = f"{home}/apps/{row.app}?relaunch={row.id}"
    return Markup('<p><a href="{}">{}</a> · <a href="{}">{}</a></p>').format(
        relaunch, _("Relaunch with the same values"), f"{home}/apps", _("Interactive apps")
    )


async def ended_page(request: Request, session_hex: str, user_id: int) -> HTMLResponse | None:
    """The page for the owner's session that is over or being ended; None if not theirs."""
    row = await _session(request, session_hex, user_id)
    if row is None:
        return None
    definitions: dict[str, AppDefinition] = dict(services_of(request.app).apps)
    definition = definitions.get(row.app)
    app_title = definition.title if definition else row.app
    secret = str(services_of(request.app).settings.secret_key.get_secret_value())
    home = credentials.home_of(secret, request.cookies.get(credentials.HOME_COOKIE))
    if state_of(row) == "ended":
        title = _("Your %(app)s session has ended", app=app_title)
    else:
        title = _("Your %(app)s session is ending", app=app_title)
    if row.idle_ended_at is not None:
        why = _(
            "The portal ended it because nobody had used it for a while. Your files stay in "
            "your folders on the cluster."
        )
    else:
        why = _(
            "Its job on the cluster has ended, so the app is no longer served here. Your files "
            "stay in your folders on the cluster."
        )
    body = PAGE.format(lang=current_locale(), title=escape(title), why=why, links=_links(home, row))
    return HTMLResponse(str(body), status_code=410)
