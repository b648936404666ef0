"""Error pages in the visitor's own layout: a signed-in user keeps the navigation and the
user menu on a 404 or a 500, a visitor keeps the sign-in link (``app.errors.PageVisitors``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import Request

from app.web.auth import get_web_context, known_web_context
from app.wiring import services_of


class WebVisitors:
    async def identify(self, request: Request) -> None:
        # Routes have found the visitor already; an unknown address never reached one.
        if known_web_context(request) is not None:
            return
        async with services_of(request.app).sessionmaker() as session:
            await get_web_context(request, session)

    def page_values(self, request: Request) -> Mapping[str, Any]:
        context = known_web_context(request)
        if context is None:
            return {}
        return {"actor": context.actor, "csrf_token": context.csrf_token}
