"""/shell/{cluster}: a terminal in the page (xterm.js), and the WebSocket that joins it to a
login shell on the cluster as the signed-in user (ADR 0026).

The socket is the portal's, on the portal's origin: it is refused before the handshake to
anyone not signed in, to a page of another origin (a sibling app host included) and when the
site has turned shells off; its first message must carry the page's CSRF token. Frames: the
browser sends keystrokes as binary frames and its window size as a JSON text frame; the portal
sends the shell's output as binary frames and, before it closes, why as a text frame.
"""

from __future__ import annotations

import hmac
import json
import secrets
from collections.abc import Awaitable, Callable

from fastapi import APIRouter, Request, WebSocket
from fastapi.responses import Response
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.audit.service import Origin
from app.deps import ShellServiceDep
from app.errors import PortalError
from app.i18n import _, ngettext
from app.scheduler.terminals import TerminalSize
from app.security import CONTENT_SECURITY_POLICY
from app.shell.service import EndedBy, ShellService
from app.web.app_proxy import POLICY_VIOLATION, is_cross_site
from app.web.auth import CurrentUser, WebContextDep, signed_in_context
from app.web.shell_relay import close_with, first_text, relay, size_of
from app.web.views import page
from app.wiring import services_of

router = APIRouter(include_in_schema=False)
SOCKET_PATH = "/shell/{cluster}/socket"


def _page_policy(nonce: str) -> str:
    """The site's policy, but for the style elements xterm.js creates: the page's script gives
    them this response's nonce, so no other inline style applies."""
    return CONTENT_SECURITY_POLICY.replace("style-src 'self'", f"style-src 'self' 'nonce-{nonce}'")


def _in_words(seconds: float, *, ended: bool) -> str:
    """The idle limit in a sentence: how long the shell waits, or waited, for input."""
    count, in_minutes = (round(seconds / 60), True) if seconds >= 60 else (round(seconds), False)
    if ended and in_minutes:
        return ngettext(
            "The shell was closed after %(num)d minute without input.",
            "The shell was closed after %(num)d minutes without input.",
            count,
        )
    if ended:
        return ngettext(
            "The shell was closed after %(num)d second without input.",
            "The shell was closed after %(num)d seconds without input.",
            count,
        )
    if in_minutes:
        return ngettext(
            "It closes after %(num)d minute without input, and when you leave this page.",
            "It closes after %(num)d minutes without input, and when you leave this page.",
            count,
        )
    return ngettext(
        "It closes after %(num)d second without input, and when you leave this page.",
        "It closes after %(num)d seconds without input, and when you leave this page.",
        count,
    )


@router.get("/shell/{cluster}", name="shell")
async def shell_page(
    request: Request, web: WebContextDep, actor: CurrentUser, shells: ShellServiceDep, cluster: str
) -> Response:
    shells.check_offered(actor, cluster)
    nonce = secrets.token_urlsafe(18)
    context = {
        "cluster": cluster,
        "clusters": shells.clusters_for(actor),
        "username": actor.username_on(cluster),
        "socket_path": SOCKET_PATH.format(cluster=cluster),
        "style_nonce": nonce,
        "idle_hint": _in_words(shells.idle_timeout, ended=False),
    }
    response = page(request, web, "shell/terminal.html", context)
    response.headers["Content-Security-Policy"] = _page_policy(nonce)
    return response


async def _hello(websocket: WebSocket, csrf_token: str) -> TerminalSize | None:
    """The first frame: the page's CSRF token and its window size; None if it is not that."""
    try:
        text = await first_text(websocket)
        token = str(json.loads(text)["csrf"])
    except (ValueError, TypeError, KeyError, RuntimeError, TimeoutError):
        return None
    if not hmac.compare_digest(token.encode(), csrf_token.encode()):
        return None
    return size_of(text)


def _origin(websocket: WebSocket) -> Origin:
    return Origin("web", websocket.client.host if websocket.client else None)


@router.websocket(SOCKET_PATH)
async def shell_socket(websocket: WebSocket, cluster: str) -> None:
    services = services_of(websocket.app)
    shells: ShellService = services.shells
    context = None
    if shells.is_enabled and not is_cross_site(websocket):
        context = await signed_in_context(websocket, services.sessionmaker)
    actor = context.actor if context is not None else None
    if context is None or actor is None or cluster not in shells.clusters_for(actor):
        await websocket.close(code=POLICY_VIOLATION)
        return
    await websocket.accept()
    size = await _hello(websocket, context.csrf_token)
    if size is None:
        await close_with(websocket, POLICY_VIOLATION, _("This page has expired; reload it."))
        return
    is_signed_in = _sign_in_check(websocket, services.sessionmaker, actor.user_id)
    try:
        async with shells.open(actor, cluster, size, _origin(websocket)) as shell:
            ended_by = await relay(websocket, shell.terminal, shells.idle_timeout, is_signed_in)
            shell.ended_by = ended_by
    except PortalError as refusal:
        await close_with(websocket, 1011 if refusal.status_code >= 500 else POLICY_VIOLATION,
                         refusal.detail)  # fmt: skip
        return
    await close_with(websocket, 1000, _ending_words(shell.ended_by, shells.idle_timeout))


def _sign_in_check(
    websocket: WebSocket, sessionmaker: async_sessionmaker[AsyncSession], user_id: int
) -> Callable[[], Awaitable[bool]]:
    """Whether the shell's user is still signed in with the cookie that opened it."""

    async def is_signed_in() -> bool:
        again = await signed_in_context(websocket, sessionmaker)
        return again is not None and again.actor is not None and again.actor.user_id == user_id

    return is_signed_in


def _ending_words(ended_by: EndedBy, idle_timeout: float) -> str | None:
    """Why the shell ended, for the terminal; None when the browser left (nobody to tell)."""
    if ended_by == "idle":
        return _in_words(idle_timeout, ended=True)
    words = {
        "exit": _("The shell has ended."),
        "lost": _("The connection to the login node was lost."),
        "signed_out": _("You are no longer signed in, so the shell was closed."),
    }
    return words.get(ended_by)
