"""Every error the portal answers with, installed once for both surfaces: JSON under /api/
(app/api/v1/errors.py), pages elsewhere (app/web/error_pages.py).

Errors that are not the portal's own (a request validator's refusal, Starlette's 404 and 405,
a scheduler error a service let through, an unexpected exception) become one of the plain
errors of app/errors.py first, so both surfaces show them the same way.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from app import i18n
from app.api.v1.errors import json_error_response, rejection_response, validation_failure
from app.errors import (
    Conflict,
    Forbidden,
    InternalError,
    NotFound,
    PortalError,
    ServiceUnavailable,
    Unauthorized,
    ValidationFailed,
)
from app.i18n import _
from app.not_found import missing_at
from app.scheduler.errors import InvalidSpec, PreflightFailed, SchedulerUnavailable, SubmitRejected
from app.web.error_pages import (
    identify,
    page_error_response,
    page_validation_failure,
    visitors_language,
)

logger = logging.getLogger(__name__)

_HTTP_ERROR_TYPES = {
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    503: ServiceUnavailable,
}


def is_api_request(request: Request) -> bool:
    return request.url.path.startswith("/api/")


def _respond(
    request: Request, error: PortalError, headers: Mapping[str, str] | None = None
) -> Response:
    """The response for ``error``, shaped for the surface the request came from."""
    if is_api_request(request):
        return json_error_response(error, headers)
    return page_error_response(request, error, headers)


async def _identify(request: Request) -> None:
    """Find who is browsing before a whole page is drawn, so it keeps their layout."""
    if not is_api_request(request):
        await identify(request)


def _reason_phrase(status_code: int, detail: str) -> str:
    """Starlette's default detail, the status's English reason phrase, in the reader's
    language; any other detail as it was given."""
    phrases = {
        400: ("Bad Request", _("Bad Request")),
        401: ("Unauthorized", _("Unauthorized")),
        403: ("Forbidden", _("Forbidden")),
        405: ("Method Not Allowed", _("Method Not Allowed")),
        409: ("Conflict", _("Conflict")),
        413: ("Request Entity Too Large", _("Request Entity Too Large")),
        415: ("Unsupported Media Type", _("Unsupported Media Type")),
        429: ("Too Many Requests", _("Too Many Requests")),
        503: ("Service Unavailable", _("Service Unavailable")),
    }
    english, translated = phrases.get(status_code, (detail, detail))
    return translated if detail == english else detail


def _from_http_exception(error: StarletteHTTPException) -> PortalError:
    error_class = _HTTP_ERROR_TYPES.get(error.status_code)
    detail = _reason_phrase(error.status_code, str(error.detail))
    if error_class is not None:
        return error_class(None if error.status_code == 404 else detail)
    generic = PortalError(detail)
    generic.status_code = error.status_code
    return generic


async def _handle_portal_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, PortalError)
    await _identify(request)
    return _respond(request, error)


async def _handle_request_validation(request: Request, error: Exception) -> Response:
    assert isinstance(error, RequestValidationError)
    if is_api_request(request):
        return json_error_response(validation_failure(error))
    await _identify(request)
    return _respond(request, page_validation_failure(error))


async def _handle_http_exception(request: Request, error: Exception) -> Response:
    assert isinstance(error, StarletteHTTPException)
    # First: finding a signed-in visitor also brings in the language they chose.
    await _identify(request)
    portal_error = _from_http_exception(error)
    if error.status_code == 404 and not is_api_request(request):
        missing = missing_at(request.app.routes, request.url.path)
        portal_error = NotFound(missing) if missing else portal_error
    return _respond(request, portal_error, headers=error.headers)


async def _handle_unexpected(request: Request, error: Exception) -> Response:
    logger.exception("unhandled error on %s %s", request.method, request.url.path)
    await _identify(request)
    # Answered outside the middleware that chose the language for the request.
    with i18n.use_locale(visitors_language(request)):
        return _respond(request, InternalError())


async def _handle_rejected(request: Request, error: Exception) -> Response:
    assert isinstance(error, SubmitRejected)
    if is_api_request(request):
        return rejection_response(error)
    return _respond(request, ValidationFailed(error.message))


async def _handle_preflight(request: Request, error: Exception) -> Response:
    assert isinstance(error, PreflightFailed)
    fields = {field: message for field, message in error.problems}
    failure = ValidationFailed("The cluster would refuse this job.", fields, error.raw)
    return _respond(request, failure)


async def _handle_invalid_spec(request: Request, error: Exception) -> Response:
    assert isinstance(error, InvalidSpec)
    return _respond(request, ValidationFailed(fields={error.field: error.message}))


async def _handle_unavailable(request: Request, error: Exception) -> Response:
    assert isinstance(error, SchedulerUnavailable)
    logger.warning("scheduler unavailable on %s: %s", request.url.path, error)
    detail = "The cluster did not answer; try again shortly."
    return _respond(request, ServiceUnavailable(detail))


def install_error_handlers(app: FastAPI) -> None:
    """Error answers for both surfaces, for every error a request can end in."""
    app.add_exception_handler(PortalError, _handle_portal_error)
    app.add_exception_handler(RequestValidationError, _handle_request_validation)
    app.add_exception_handler(StarletteHTTPException, _handle_http_exception)
    # Safety nets: the services already translate most scheduler errors, but an unreachable
    # cluster or a refused submission must never become a 500.
    app.add_exception_handler(SubmitRejected, _handle_rejected)
    app.add_exception_handler(PreflightFailed, _handle_preflight)
    app.add_exception_handler(InvalidSpec, _handle_invalid_spec)
    app.add_exception_handler(SchedulerUnavailable, _handle_unavailable)
    app.add_exception_handler(Exception, _handle_unexpected)
