"""Who is browsing: the signed session cookie, trusted proxy sign-in and CSRF checks.

Every web router is built with ``csrf_protected_router()`` so that no state-changing
request is handled before its CSRF token has been checked.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import Response
from itsdangerous import BadSignature, TimestampSigner
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from starlette.requests import HTTPConnection

from app import i18n
from app.announcements import service as announcements
from app.audit.service import Origin
from app.db import unit_of_work
from app.deps import SessionmakerDep
from app.errors import Forbidden
from app.i18n import _
from app.templating import is_htmx
from app.users import service as users
from app.users import sessions
from app.users.actor import Actor
from app.web.proxies import peer_address
from app.web.settings import get_web_settings
from app.wiring import services_of

SESSION_COOKIE = "portal_session"
ANON_CSRF_COOKIE = "portal_csrf"
# Over TLS the portal's cookies are named __Host-…: a browser keeps such a cookie only when
# this very host set it, Secure and without a Domain, so no other host under the same parent
# domain (an interactive app's host above all) can plant or replace it; the bare names are
# then ignored. Plain HTTP has no such guarantee (ADR 0019).
HOST_ONLY_PREFIX = "__Host-"
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "X-CSRF-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


@dataclass(frozen=True, slots=True)
class WebContext:
    actor: Actor | None
    csrf_token: str
    session_token: str | None = None
    # Set when an anonymous visitor got a fresh CSRF secret that still has to be stored.
    new_anon_secret: str | None = None


def _secret(request: HTTPConnection) -> str:
    return str(services_of(request.app).settings.secret_key.get_secret_value())


def _signer(request: HTTPConnection, purpose: str) -> TimestampSigner:
    return TimestampSigner(_secret(request), salt=f"hpc-portal.{purpose}")


def _sent_once(request: HTTPConnection, name: str) -> str | None:
    """The cookie's value if the browser sent exactly one of that name.

    The portal never sets a Domain, so a second cookie of its name was planted for a parent
    domain by another host (over plain HTTP, where __Host- names are not available). Which
    of the two is the portal's own cannot be told, so neither is believed: the visitor is
    signed out rather than signed in as whoever planted theirs.
    """
    pairs = (pair for value in request.headers.getlist("cookie") for pair in value.split(";"))
    found = [pair.split("=", 1) for pair in pairs if pair.split("=", 1)[0].strip() == name]
    return found[0][1].strip() if len(found) == 1 and len(found[0]) == 2 else None


def _unsign(request: HTTPConnection, cookie: str, purpose: str) -> str | None:
    value = _sent_once(request, cookie_name(request, cookie))
    if not value:
        return None
    try:
        max_age = int(sessions.SESSION_LIFETIME.total_seconds())
        return _signer(request, purpose).unsign(value, max_age=max_age).decode()
    except BadSignature:
        return None


def _derived_token(request: HTTPConnection, purpose: str, value: str) -> str:
    key = hashlib.sha256(f"{_secret(request)}:{purpose}".encode()).digest()
    return hmac.new(key, value.encode(), hashlib.sha256).hexdigest()


def _client_address(request: Request) -> str:
    return request.client.host if request.client else ""


async def _from_proxy(request: HTTPConnection, session: AsyncSession) -> WebContext | None:
    settings = get_web_settings(request)
    if not settings.is_trusted_proxy(peer_address(request)):
        return None
    login = request.headers.get(settings.trusted_proxy_header)
    if not login:
        return None
    user = await users.user_for_trusted_login(session, login)
    # No server session: the proxy vouches on every request, so the token is derived.
    token = _derived_token(request, "proxy-csrf", user.login)
    return WebContext(actor=await users.actor_for(session, user), csrf_token=token)


async def _from_session(request: HTTPConnection, session: AsyncSession) -> WebContext | None:
    token = _unsign(request, SESSION_COOKIE, "session")
    resolved = await sessions.resolve(session, token) if token else None
    if resolved is None or token is None:
        return None
    found, user = resolved
    if not user.is_active:
        return None
    actor = await users.actor_for(session, user)
    return WebContext(actor=actor, csrf_token=found.csrf_token, session_token=token)


def _anonymous(request: Request) -> WebContext:
    secret = _unsign(request, ANON_CSRF_COOKIE, "anon-csrf")
    if secret is None:
        fresh = secrets.token_urlsafe(32)
        token = _derived_token(request, "anon-csrf", fresh)
        return WebContext(actor=None, csrf_token=token, new_anon_secret=fresh)
    return WebContext(actor=None, csrf_token=_derived_token(request, "anon-csrf", secret))


def known_web_context(request: Request) -> WebContext | None:
    """The visitor as found earlier in this request, if anything asked yet."""
    cached: WebContext | None = getattr(request.state, "web_context", None)
    return cached


def _is_full_page(request: Request) -> bool:
    """A request answered with a whole page: not an htmx fragment, not an event stream."""
    accepted = request.headers.get("accept", "")
    return not is_htmx(request) and "text/event-stream" not in accepted


async def get_web_context(request: Request, sessionmaker: SessionmakerDep) -> WebContext:
    """Who is browsing, found in a short transaction of its own (the "last seen" touch
    included) that ends before the route runs: the request's own session stays unused, so
    a route that only calls a cluster holds no connection and no lock while it waits."""
    cached = known_web_context(request)
    if cached is not None:
        return cached
    async with unit_of_work(sessionmaker) as session:
        context = await _from_session(request, session) or await _from_proxy(request, session)
        if context is not None and context.actor is not None and _is_full_page(request):
            # Every full page shows the announcements its reader has not dismissed.
            request.state.banner = await announcements.banner(session, context.actor)
    context = context or _anonymous(request)
    request.state.web_context = context
    if context.actor is not None:
        # The user's own setting outranks the browser's language (LocaleMiddleware).
        i18n.set_locale(context.actor.locale)
        request.state.theme = context.actor.theme
    return context


WebContextDep = Annotated[WebContext, Depends(get_web_context)]


async def signed_in_context(
    connection: HTTPConnection, sessionmaker: async_sessionmaker[AsyncSession]
) -> WebContext | None:
    """The signed-in visitor of a connection no page dependency serves (a WebSocket), found
    in a short transaction of its own; None for anyone else. Their language is set too."""
    async with unit_of_work(sessionmaker) as session:
        context = await _from_session(connection, session)
        context = context or await _from_proxy(connection, session)
    if context is None or context.actor is None:
        return None
    i18n.set_locale(context.actor.locale)
    return context


async def _submitted_csrf(request: Request) -> str:
    header = request.headers.get(CSRF_HEADER)
    if header:
        return header
    content_type = request.headers.get("content-type", "")
    if content_type.startswith(("application/x-www-form-urlencoded", "multipart/form-data")):
        value = (await request.form()).get(CSRF_FIELD)
        return value if isinstance(value, str) else ""
    return ""


async def require_csrf(request: Request, context: WebContextDep) -> None:
    """Refuse (403) any state-changing request without this visitor's CSRF token."""
    if request.method in SAFE_METHODS:
        return
    sent = await _submitted_csrf(request)
    if not sent or not hmac.compare_digest(sent.encode(), context.csrf_token.encode()):
        raise Forbidden(
            _("This form has expired or did not come from this site. Reload the page and retry.")
        )


def csrf_protected_router(**kwargs: Any) -> APIRouter:
    """An APIRouter whose every route checks the CSRF token first."""
    dependencies = [Depends(require_csrf), *kwargs.pop("dependencies", [])]
    return APIRouter(dependencies=dependencies, include_in_schema=False, **kwargs)


def sign_in_url(request: Request) -> str:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return f"/signin?next={quote(target, safe='')}"


async def require_actor(request: Request, context: WebContextDep) -> Actor:
    """The signed-in user; otherwise the browser is sent to the sign-in page."""
    if context.actor is not None:
        return context.actor
    location = sign_in_url(request)
    if is_htmx(request):
        raise HTTPException(status_code=401, headers={"HX-Redirect": location})
    raise HTTPException(status_code=303, headers={"Location": location})


CurrentUser = Annotated[Actor, Depends(require_actor)]


async def require_signed_in_before_body(request: Request) -> None:
    """Send an anonymous visitor to sign in before any of their body is read.

    FastAPI parses form and file parameters before it runs any dependency, and the CSRF
    check reads the form; so who is sending is settled here, from the layer that hands out
    the body (``app.request_bodies``); ``get_web_context`` reads it in a short transaction
    of its own and keeps it for the rest of the request."""
    context = await get_web_context(request, services_of(request.app).sessionmaker)
    await require_actor(request, context)


WebActor = CurrentUser


def is_secure_request(request: HTTPConnection) -> bool:
    is_tls = request.url.scheme in ("https", "wss")
    return is_tls or get_web_settings(request).secure_cookies


def cookie_name(request: HTTPConnection, name: str) -> str:
    """The name the portal's cookie ``name`` has on this request (see HOST_ONLY_PREFIX)."""
    return f"{HOST_ONLY_PREFIX}{name}" if is_secure_request(request) else name


def set_session_cookie(request: Request, response: Response, token: str) -> None:
    response.set_cookie(
        cookie_name(request, SESSION_COOKIE),
        _signer(request, "session").sign(token).decode(),
        max_age=int(sessions.SESSION_LIFETIME.total_seconds()),
        httponly=True,
        samesite="lax",
        secure=is_secure_request(request),
        path="/",
    )


def set_anon_csrf_cookie(request: Request, response: Response, context: WebContext) -> None:
    if context.new_anon_secret is None:
        return
    response.set_cookie(
        cookie_name(request, ANON_CSRF_COOKIE),
        _signer(request, "anon-csrf").sign(context.new_anon_secret).decode(),
        httponly=True,
        samesite="lax",
        secure=is_secure_request(request),
        path="/",
    )


def clear_session_cookie(request: Request, response: Response) -> None:
    response.delete_cookie(
        cookie_name(request, SESSION_COOKIE),
        path="/",
        httponly=True,
        samesite="lax",
        secure=is_secure_request(request),
    )


def client_address(request: Request) -> str:
    return _client_address(request)


def web_origin(request: Request) -> Origin:
    """Where a page action came from, for the audit trail."""
    return Origin("web", client_address(request) or None)
