"""The portal's one error hierarchy and how errors are shown: JSON for /api/, HTML otherwise.

Services raise these; routes never build error responses themselves. The public message is
safe to show to the user; anything else (tracebacks, SQL) only goes to the log.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.not_found import is_in_path, missing_at, missing_in_path
from app.templating import is_htmx, render

logger = logging.getLogger(__name__)


class PortalError(Exception):
    status_code = 500
    default_detail = "Something went wrong."

    def __init__(self, detail: str | None = None) -> None:
        self.detail = detail or self.default_detail
        super().__init__(self.detail)

    @property
    def error_type(self) -> str:
        return type(self).__name__


class Unauthorized(PortalError):
    status_code = 401
    default_detail = "You need to sign in."


class Forbidden(PortalError):
    status_code = 403
    default_detail = "You are not allowed to do that."


class NotFound(PortalError):
    status_code = 404
    default_detail = "Not found."


class Conflict(PortalError):
    status_code = 409
    default_detail = "That conflicts with the current state."


class ValidationFailed(PortalError):
    status_code = 422
    default_detail = "Some values are not valid."

    def __init__(
        self,
        detail: str | None = None,
        fields: Mapping[str, str] | None = None,
        raw: str | None = None,
    ):
        super().__init__(detail)
        self.fields = dict(fields or {})
        self.raw = raw or None
        """What Slurm itself said, when the refusal came from it."""


class BadGateway(PortalError):
    status_code = 502
    default_detail = "The server behind the portal did not answer."


class ServiceUnavailable(PortalError):
    status_code = 503
    default_detail = "A service the portal depends on is unavailable; try again shortly."


class InternalError(PortalError):
    status_code = 500
    default_detail = "Something went wrong on our side. It has been logged."


_HTTP_ERROR_TYPES = {
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    503: ServiceUnavailable,
}


class PageVisitors(Protocol):
    """Who is browsing, as the web surface knows it, so that an HTML error page keeps the
    visitor's own layout: their navigation and user menu, or the sign-in link."""

    async def identify(self, request: Request) -> None:
        """Find the visitor when no route did (an unknown address)."""

    def page_values(self, request: Request) -> Mapping[str, Any]:
        """The layout's template values for the visitor found so far (none: signed out)."""


def is_api_request(request: Request) -> bool:
    return request.url.path.startswith("/api/")


def _visitors(request: Request) -> PageVisitors | None:
    visitors: PageVisitors | None = request.app.state.page_visitors
    return visitors


async def _identify(request: Request) -> None:
    """Resolve the visitor before a whole HTML error page is drawn (toasts need no layout)."""
    visitors = _visitors(request)
    if visitors is None or is_api_request(request) or is_htmx(request):
        return
    try:
        await visitors.identify(request)
    except Exception:
        # The page that reports an error must not fail in turn (a database that is down).
        logger.warning("could not tell who is browsing %s", request.url.path, exc_info=True)


def error_response(
    request: Request, error: PortalError, headers: Mapping[str, str] | None = None
) -> Response:
    """The response for ``error``, shaped for the surface the request came from."""
    fields = error.fields if isinstance(error, ValidationFailed) else {}
    if is_api_request(request):
        body: dict[str, Any] = {"error": error.error_type, "detail": error.detail}
        if isinstance(error, ValidationFailed):
            body["fields"] = fields
            if error.raw:
                body["raw"] = error.raw
        return JSONResponse(body, status_code=error.status_code, headers=headers)
    visitors = _visitors(request)
    context = {
        **(visitors.page_values(request) if visitors else {}),
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


def _field_name(location: Sequence[Any]) -> str:
    parts = [str(part) for part in location]
    if parts and parts[0] in ("body", "query", "path", "header", "cookie", "form"):
        parts = parts[1:]
    return ".".join(parts) or "request"


def validation_failure(error: RequestValidationError) -> ValidationFailed:
    fields: dict[str, str] = {}
    for item in error.errors():
        fields.setdefault(_field_name(item.get("loc", ())), str(item.get("msg", "invalid")))
    return ValidationFailed(fields=fields)


def _from_http_exception(error: StarletteHTTPException) -> PortalError:
    error_class = _HTTP_ERROR_TYPES.get(error.status_code)
    if error_class is not None:
        return error_class(None if error.status_code == 404 else str(error.detail))
    generic = PortalError(str(error.detail))
    generic.status_code = error.status_code
    return generic


def _page_validation_failure(error: RequestValidationError) -> PortalError:
    """On a page, a malformed id in the address is a page that does not exist."""
    if not is_in_path(error.errors()):
        return validation_failure(error)
    return NotFound(missing_in_path(error.errors()))


async def _handle_portal_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, PortalError)
    await _identify(request)
    return error_response(request, error)


async def _handle_request_validation(request: Request, error: Exception) -> Response:
    assert isinstance(error, RequestValidationError)
    if is_api_request(request):
        return error_response(request, validation_failure(error))
    await _identify(request)
    return error_response(request, _page_validation_failure(error))


async def _handle_http_exception(request: Request, error: Exception) -> Response:
    assert isinstance(error, StarletteHTTPException)
    portal_error = _from_http_exception(error)
    if error.status_code == 404 and not is_api_request(request):
        missing = missing_at(request.app.routes, request.url.path)
        portal_error = NotFound(missing) if missing else portal_error
    await _identify(request)
    return error_response(request, portal_error, headers=error.headers)


async def _handle_unexpected(request: Request, error: Exception) -> Response:
    logger.exception("unhandled error on %s %s", request.method, request.url.path)
    await _identify(request)
    return error_response(request, InternalError())


def install_error_handlers(app: FastAPI, visitors: PageVisitors | None = None) -> None:
    """Error answers for both surfaces; ``visitors`` lets HTML errors keep the page layout."""
    app.state.page_visitors = visitors
    app.add_exception_handler(PortalError, _handle_portal_error)
    app.add_exception_handler(RequestValidationError, _handle_request_validation)
    app.add_exception_handler(StarletteHTTPException, _handle_http_exception)
    app.add_exception_handler(Exception, _handle_unexpected)
