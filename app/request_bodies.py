"""What must hold before a request's body is read: who sends it, and how large it may be.

``BodyLimitMiddleware`` asks both when the body is first read, after the router chose the
endpoint that reads it, and before a byte of it is pulled in.

Who: every route's sender is known first (a signed-in visitor on the pages, a valid token on
the API), except on the sign-in forms; FastAPI would otherwise parse form, file and JSON
parameters before any dependency checked anyone, and the CSRF check reads the form.

How large: the site's limit, except on the routes that stream their bodies on unread (an
interactive app's requests, a piece of an upload); the limit is the chosen endpoint's. So a
larger limit belongs to the streaming route itself, never to paths that merely look like
it: the form that ends an app session lives under /apps/sessions/ too and gets the site's
limit, as does any endpoint added later. A layer that hid the chosen endpoint would leave
the site's limit everywhere (the proxy's 50 MiB upload test would say so), never lift it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.types import Scope

from app.api.v1.deps import authenticate_before_body
from app.api.v1.routes import files as api_files
from app.files.service import UPLOAD_PART_BYTES
from app.web import app_host, files_changes, signin
from app.web.auth import require_signed_in_before_body
from app.web.settings import web_settings_of

UNLIMITED_BODY = 2**62
# The app's requests go to its server unread (uploads, notebook saves): the portal holds none
# of them. An upload piece is sized by the upload protocol, not by the site's limit for forms,
# so a lower PORTAL_MAX_BODY_BYTES cannot break uploads.
STREAMING_ROUTES: dict[Callable[..., Any], int] = {
    app_host.proxy: UNLIMITED_BODY,
    files_changes.upload_part: UPLOAD_PART_BYTES,
    api_files.upload_part: UPLOAD_PART_BYTES,
}


# Forms an anonymous visitor sends, and an app's host, whose proxy checks its own
# session-scoped cookie before it streams (the portal's sign-in does not reach that host).
ANY_SENDER: frozenset[Callable[..., Any]] = frozenset(
    {signin.signin, signin.signout, app_host.proxy}
)


async def check_sender(scope: Scope) -> None:
    """Raise the sign-in redirect (pages) or 401 (API) when nobody may send this body."""
    endpoint = scope.get("endpoint")
    # Not one of the portal's routes (the static files): it reads no body.
    module = str(getattr(endpoint, "__module__", ""))
    if endpoint in ANY_SENDER or not module.startswith("app."):
        return
    request = Request(scope)
    if module.startswith("app.api."):
        await authenticate_before_body(request)
    else:
        await require_signed_in_before_body(request)


def max_body_bytes(scope: Scope) -> int:
    """The most this request's body may hold, once routed (``scope["endpoint"]``)."""
    site_limit = web_settings_of(scope["app"]).max_body_bytes
    endpoint = scope.get("endpoint")
    if endpoint is None:
        return site_limit
    return STREAMING_ROUTES.get(endpoint, site_limit)
