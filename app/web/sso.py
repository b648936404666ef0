"""Single sign-on pages: off to the identity provider, and back signed in (ADR 0028).

The button is a link, not a form: the browser leaves for the provider's origin by a plain
navigation, so the Content-Security-Policy's ``form-action 'self'`` never stands in its way.
"""

from __future__ import annotations

from fastapi import Request
from fastapi.responses import RedirectResponse, Response

from app.audit import service as audit
from app.deps import SessionDep
from app.errors import NotFound, PortalError
from app.i18n import _, lazy_gettext
from app.users import sessions, sso
from app.users.oidc import OidcClient, SignInRefused
from app.web.auth import (
    WebContextDep,
    client_address,
    csrf_protected_router,
    set_anon_csrf_cookie,
    set_session_cookie,
)
from app.web.error_pages import page_error_response
from app.web.views import redirect, safe_next
from app.wiring import services_of

router = csrf_protected_router()

# What the provider says when the person turned the request down or it could not be served
# (OpenID Connect Core 3.1.2.6), in words for the person.
_PROVIDER_ERRORS = {
    "access_denied": lazy_gettext("You cancelled the sign-in at the sign-in service."),
    "login_required": lazy_gettext("The sign-in service needs you to sign in again."),
}


def _client(request: Request) -> OidcClient:
    client = services_of(request.app).oidc
    if client is None:
        raise NotFound()
    return client


def _redirect_uri(request: Request) -> str:
    return str(request.url_for("sso_callback"))


def _mapping(request: Request) -> sso.UserMapping:
    settings = services_of(request.app).settings
    return sso.UserMapping(
        username_claim=settings.oidc_username_claim, create_users=settings.oidc_create_users
    )


@router.get("/signin/sso", name="sso_signin")
async def sso_signin(
    request: Request, session: SessionDep, web: WebContextDep, next: str | None = None
) -> Response:
    client = _client(request)
    if web.actor is not None:
        return redirect(request, safe_next(next))
    url = await sso.begin(
        session,
        client,
        browser_secret=web.csrf_token,
        next_path=safe_next(next),
        redirect_uri=_redirect_uri(request),
    )
    response = RedirectResponse(url, status_code=303)
    # A first visit gets its pre-sign-in cookie here: the attempt is bound to it.
    set_anon_csrf_cookie(request, response, web)
    return response


def _provider_error(code: str) -> SignInRefused:
    message = _PROVIDER_ERRORS.get(code)
    if message is not None:
        return SignInRefused(str(message))
    return SignInRefused(_("The sign-in service could not sign you in. Please try again."))


@router.get("/signin/sso/callback", name="sso_callback")
async def sso_callback(
    request: Request,
    session: SessionDep,
    web: WebContextDep,
    code: str = "",
    state: str = "",
    error: str = "",
) -> Response:
    client = _client(request)
    address = client_address(request)
    try:
        if error or not code:
            raise _provider_error(error[:64])
        signed_in = await sso.finish(
            session,
            client,
            state=state[:512],
            code=code[:2048],
            browser_secret=web.csrf_token,
            redirect_uri=_redirect_uri(request),
            mapping=_mapping(request),
        )
    except PortalError as failure:
        # Rendered rather than raised: the audit event must be committed with the request.
        details = {"via": "sso", "status": failure.status_code, "reason": failure.detail[:200]}
        await audit.record(
            session, None, "web", "auth.sign_in_failed", None, None, address, details
        )
        return page_error_response(request, failure)
    user = signed_in.user
    token = await sessions.start(
        session, user.id, replacing=web.session_token, id_token=signed_in.id_token
    )
    await audit.record(
        session, user.id, "web", "auth.sign_in", "user", user.id, address, {"via": "sso"}
    )
    response = redirect(request, safe_next(signed_in.next_path))
    set_session_cookie(request, response, token)
    return response


async def provider_logout_url(request: Request, id_token: str | None) -> str | None:
    """Where sign-out continues at the provider (RP-initiated logout), when it offers it."""
    client = services_of(request.app).oidc
    if client is None or not id_token:
        return None
    return await client.logout_url(
        id_token=id_token, post_logout_redirect_uri=str(request.url_for("signin"))
    )
