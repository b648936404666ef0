"""Errors as pages, in the visitor's own layout: a signed-in user keeps the navigation and the
user menu on a 404 or a 500, a visitor keeps the sign-in link. For htmx requests the message
comes as a toast instead of replacing the element that asked.

app/error_handlers.py sends here every error raised while answering an address outside /api/.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response

from app import i18n
from app.errors import NotFound, PortalError, ValidationFailed, refused_field
from app.not_found import is_in_path, missing_in_path
from app.templating import is_htmx, render
from app.web.auth import get_web_context, known_web_context
from app.web.validation_wording import page_message
from app.wiring import services_of

logger = logging.getLogger(__name__)


async def identify(request: Request) -> None:
    """Resolve the visitor before a whole error page is drawn (toasts need no layout)."""
    # Routes have found the visitor already; an unknown address never reached one.
    if is_htmx(request) or known_web_context(request) is not None:
        return
    try:
        await get_web_context(request, services_of(request.app).sessionmaker)
    except Exception:
        # The page that reports an error must not fail in turn (a database that is down).
        logger.warning("could not tell who is browsing %s", request.url.path, exc_info=True)


def _page_values(request: Request) -> Mapping[str, Any]:
    """The layout's template values for the visitor found so far (none: signed out)."""
    context = known_web_context(request)
    if context is None:
        return {}
    return {"actor": context.actor, "csrf_token": context.csrf_token}


def visitors_language(request: Request) -> str:
    """The language of the visitor's pages: their own choice, else their browser's."""
    actor = _page_values(request).get("actor")
    chosen: str | None = getattr(actor, "locale", None)
    return chosen or i18n.negotiate(request.headers.get("accept-language"))


def page_error_response(
    request: Request, error: PortalError, headers: Mapping[str, str] | None = None
) -> Response:
    fields = error.fields if isinstance(error, ValidationFailed) else {}
    context = {
        **_page_values(request),
        "error": error,
        "status_code": error.status_code,
        "fields": fields,
    }
    if is_htmx(request):
        # htmx shows the message as a toast instead of replacing the element that asked.
        toast_headers = {"HX-Retarget": "#toasts", "HX-Reswap": "beforeend", **(headers or {})}
        return render(
            request,
            "error.html",
            context,
            "error",
            status_code=error.status_code,
            headers=toast_headers,
        )
    return render(request, "error.html", context, status_code=error.status_code, headers=headers)


def page_validation_failure(error: RequestValidationError) -> PortalError:
    """Refused form or query values in the reader's language; on a page, a malformed id in
    the address is a page that does not exist."""
    if is_in_path(error.errors()):
        return NotFound(missing_in_path(error.errors()))
    fields: dict[str, str] = {}
    for item in error.errors():
        fields.setdefault(refused_field(item.get("loc", ())), page_message(item))
    return ValidationFailed(fields=fields)
