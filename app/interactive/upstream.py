"""Where an interactive app's server listens, and the one HTTP client the portal reaches
every app's server with (app/web/app_relay.py relays browsers through it)."""

from __future__ import annotations

import http.cookiejar
from dataclasses import dataclass, field

import httpx

from app.db import free_request_session
from app.interactive.tunnelled import OPENER, Opener, UpstreamTransport

CONNECT_TIMEOUT = 10.0
# No read or write timeout: a download, an upload or a long poll may take as long as it takes.
TIMEOUT = httpx.Timeout(None, connect=CONNECT_TIMEOUT, pool=CONNECT_TIMEOUT)


class UpstreamUnavailable(Exception):
    """The app's server could not be reached; the caller chooses the page to show."""


@dataclass(frozen=True, slots=True)
class Upstream:
    """Where an app's server listens, and the header that presents its secret
    (``Authorization: token S`` for Jupyter; each app definition says its own). ``opener``
    is set when the cluster's compute nodes are reached through its login node: it opens
    each connection as the session's owner (app/interactive/tunnelled.py)."""

    host: str
    port: int
    auth_header: str
    # Kept out of repr so that a logged Upstream never shows the secret.
    auth_value: str = field(repr=False)
    opener: Opener | None = field(default=None, repr=False, compare=False)

    @property
    def authority(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    def extensions(self) -> dict[str, object]:
        """What an httpx request to this server carries for ``upstream_client``'s transport."""
        return {} if self.opener is None else {OPENER: self.opener}


def upstream_client() -> httpx.AsyncClient:
    """An httpx client fit for ``proxy_http`` (app/web/app_relay.py): one for the portal,
    closed at shutdown.

    It keeps no cookies (it serves every user), ignores the site's outbound proxy (compute
    nodes are reached directly, or through the login node for a request that carries an
    ``Upstream``'s extensions), and has no pool limit, which would queue one user's requests
    behind another's long ones: the portal's own server bounds the requests in flight.
    """
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=20)
    direct = httpx.AsyncHTTPTransport(trust_env=False, limits=limits)
    return httpx.AsyncClient(
        transport=UpstreamTransport(direct),
        trust_env=False,
        cookies=_NoCookies(),
        timeout=TIMEOUT,
        # A readiness check or a relayed request never holds the request's transaction.
        event_hooks={"request": [_free_request_session]},
    )


class _NoCookies(http.cookiejar.CookieJar):
    """A jar that neither stores nor sends a cookie. A refusing policy is not enough: the
    standard jar still parses every Set-Cookie of every relayed response before refusing it,
    about a tenth of a proxied request's time."""

    def extract_cookies(self, response: object, request: object) -> None:
        return None

    def add_cookie_header(self, request: object) -> None:
        return None


async def _free_request_session(_request: httpx.Request) -> None:
    await free_request_session()
