"""What every /admin and /usage page needs: the guard, the audit origin and page context."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends

from app.errors import Forbidden
from app.users.actor import Actor
from app.web.auth import CurrentUser, WebContextDep
from app.web.auth import web_origin as web_origin


async def require_site_admin(actor: CurrentUser) -> Actor:
    if not actor.is_site_admin:
        raise Forbidden("This page is for site administrators.")
    return actor


SiteAdmin = Annotated[Actor, Depends(require_site_admin)]


def page_context(web: WebContextDep, **values: Any) -> dict[str, Any]:
    return {"actor": web.actor, "csrf_token": web.csrf_token, **values}
