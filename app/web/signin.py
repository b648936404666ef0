"""Sign-in and sign-out pages."""

from __future__ import annotations

from typing import Annotated

from fastapi import Form, Request
from fastapi.responses import Response

from app.audit import service as audit
from app.deps import SessionDep, SessionmakerDep
from app.errors import Forbidden, Unauthorized
from app.i18n import _
from app.users import service as users
from app.users import sessions
from app.web.auth import (
    WebContextDep,
    clear_session_cookie,
    client_address,
    csrf_protected_router,
    set_session_cookie,
    web_origin,
)
from app.web.settings import get_web_settings
from app.web.sso import provider_logout_url
from app.web.views import page, redirect, safe_next
from app.wiring import services_of

router = csrf_protected_router()


def _ways_in(request: Request) -> dict[str, object]:
    """Which ways in the sign-in page offers: a password form, a provider's button, or both."""
    settings = services_of(request.app).settings
    return {
        "password_signin": settings.password_signin,
        "sso_name": settings.oidc_provider_name if settings.is_oidc_enabled else None,
    }


@router.get("/signin", name="signin")
async def signin_form(request: Request, web: WebContextDep, next: str | None = None) -> Response:
    if web.actor is not None:
        return redirect(request, safe_next(next))
    context = {"next": safe_next(next), "login": "", **_ways_in(request)}
    return page(request, web, "auth/signin.html", context)


@router.post("/signin")
async def signin(
    request: Request,
    session: SessionDep,
    web: WebContextDep,
    counters: SessionmakerDep,
    login: Annotated[str, Form(max_length=200)] = "",
    password: Annotated[str, Form(max_length=1000)] = "",
    next: Annotated[str, Form(max_length=2000)] = "",
) -> Response:
    if not services_of(request.app).settings.password_signin:
        raise Forbidden(_("This portal signs people in through its sign-in service only."))
    attempt = users.SignInRequest(login=login, password=password, address=client_address(request))
    try:
        user = await users.authenticate(
            session,
            attempt,
            counters=counters,
            site_limit=get_web_settings(request).signin_site_limit,
        )
    except Unauthorized as error:
        # Rendered rather than raised: the audit event must be committed with the request.
        details = {"login": login.strip()[:64], "status": error.status_code}
        await audit.record(
            session, None, "web", "auth.sign_in_failed", None, None, attempt.address, details
        )
        context = {
            "next": safe_next(next),
            "login": login,
            "error": error.detail,
            **_ways_in(request),
        }
        return page(request, web, "auth/signin.html", context, status_code=error.status_code)
    token = await sessions.start(session, user.id, replacing=web.session_token)
    await audit.record(session, user.id, "web", "auth.sign_in", "user", user.id, attempt.address)
    response = redirect(request, safe_next(next))
    set_session_cookie(request, response, token)
    return response


@router.post("/signout", name="signout")
async def signout(request: Request, session: SessionDep, web: WebContextDep) -> Response:
    id_token = await sessions.end(session, web.session_token) if web.session_token else None
    if web.actor is not None:
        origin = web_origin(request)
        target = ("user", web.actor.user_id)
        await audit.record_action(session, web.actor.user_id, origin, "auth.sign_out", target)
    # Signed in through the provider: sign out there too, or its session would sign the
    # person straight back in (RP-initiated logout; the provider comes back to /signin).
    response = redirect(request, await provider_logout_url(request, id_token) or "/signin")
    clear_session_cookie(request, response)
    return response
