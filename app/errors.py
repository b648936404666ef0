"""The portal's one error hierarchy and how errors are shown: JSON for /api/, HTML otherwise.

Services raise these; routes never build error responses themselves. The public message is
safe to show to the user; anything else (tracebacks, SQL) only goes to the log.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from babel.support import LazyProxy
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from app import i18n
from app.i18n import _, lazy_gettext, ngettext
from app.not_found import is_in_path, missing_at, missing_in_path
from app.templating import is_htmx, render

logger = logging.getLogger(__name__)


class PortalError(Exception):
    status_code = 500
    # Translated when the error is raised, in the language of the request being answered.
    default_detail: str | LazyProxy = lazy_gettext("Something went wrong.")

    def __init__(self, detail: str | None = None) -> None:
        self.detail = detail or str(self.default_detail)
        super().__init__(self.detail)

    @property
    def error_type(self) -> str:
        return type(self).__name__


class Unauthorized(PortalError):
    status_code = 401
    default_detail = lazy_gettext("You need to sign in.")


class Forbidden(PortalError):
    status_code = 403
    default_detail = lazy_gettext("You are not allowed to do that.")


class NotFound(PortalError):
    status_code = 404
    default_detail = lazy_gettext("Not found.")


class Conflict(PortalError):
    status_code = 409
    default_detail = lazy_gettext("That conflicts with the current state.")


class ValidationFailed(PortalError):
    status_code = 422
    default_detail = lazy_gettext("Some values are not valid.")

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
    default_detail = lazy_gettext("The server behind the portal did not answer.")


class ServiceUnavailable(PortalError):
    status_code = 503
    default_detail = lazy_gettext(
        "A service the portal depends on is unavailable; try again shortly."
    )


class InternalError(PortalError):
    status_code = 500
    default_detail = lazy_gettext("Something went wrong on our side. It has been logged.")


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


def validation_failure(error: RequestValidationError, *, on_page: bool = False) -> ValidationFailed:
    fields: dict[str, str] = {}
    for item in error.errors():
        message = _page_message(item) if on_page else str(item.get("msg", "invalid"))
        fields.setdefault(_field_name(item.get("loc", ())), message)
    return ValidationFailed(fields=fields)


def _date_reasons() -> dict[str, str]:
    return {
        "input is too short": _("input is too short"),
        "input is too long": _("input is too long"),
        "invalid character in year": _("invalid character in year"),
        "invalid character in month": _("invalid character in month"),
        "invalid character in day": _("invalid character in day"),
        "month value is outside expected range of 1-12": _(
            "month value is outside expected range of 1-12"
        ),
        "day value is outside expected range": _("day value is outside expected range"),
    }


def _wordings(ctx: Mapping[str, Any]) -> dict[str, Callable[[], str]]:
    """Pydantic's messages for the refusals a page's address or form meets most often."""
    return {
        "missing": lambda: _("Field required"),
        "int_parsing": lambda: _(
            "Input should be a valid integer, unable to parse string as an integer"
        ),
        "bool_parsing": lambda: _("Input should be a valid boolean, unable to interpret input"),
        "greater_than_equal": lambda: _(
            "Input should be greater than or equal to %(minimum)s", minimum=ctx.get("ge")
        ),
        "less_than_equal": lambda: _(
            "Input should be less than or equal to %(maximum)s", maximum=ctx.get("le")
        ),
        "string_too_long": lambda: ngettext(
            "String should have at most %(num)d character",
            "String should have at most %(num)d characters",
            int(ctx.get("max_length", 0)),
        ),
        "date_from_datetime_parsing": lambda: _(
            "Input should be a valid date or datetime, %(reason)s",
            reason=_date_reasons().get(str(ctx.get("error")), str(ctx.get("error"))),
        ),
    }


def _page_message(item: Mapping[str, Any]) -> str:
    """Pydantic's message for a refused value in the reader's language, when it is one we
    know word for word (in English the same message comes out); otherwise as it was said."""
    said = str(item.get("msg", "invalid"))
    wording = _wordings(item.get("ctx") or {}).get(str(item.get("type")))
    if wording is None:
        return said
    with i18n.use_locale(i18n.DEFAULT_LOCALE):
        english = wording()
    return wording() if english == said else said


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


def _page_validation_failure(error: RequestValidationError) -> PortalError:
    """On a page, a malformed id in the address is a page that does not exist."""
    if not is_in_path(error.errors()):
        return validation_failure(error, on_page=True)
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
    # First: finding a signed-in visitor also brings in the language they chose.
    await _identify(request)
    portal_error = _from_http_exception(error)
    if error.status_code == 404 and not is_api_request(request):
        missing = missing_at(request.app.routes, request.url.path)
        portal_error = NotFound(missing) if missing else portal_error
    return error_response(request, portal_error, headers=error.headers)


def _visitors_language(request: Request) -> str:
    """The language of the visitor's pages: their own choice, else their browser's."""
    visitors = _visitors(request)
    actor = visitors.page_values(request).get("actor") if visitors else None
    chosen: str | None = getattr(actor, "locale", None)
    return chosen or i18n.negotiate(request.headers.get("accept-language"))


async def _handle_unexpected(request: Request, error: Exception) -> Response:
    logger.exception("unhandled error on %s %s", request.method, request.url.path)
    await _identify(request)
    # Answered outside the middleware that chose the language for the request.
    with i18n.use_locale(_visitors_language(request)):
        return error_response(request, InternalError())


def install_error_handlers(app: FastAPI, visitors: PageVisitors | None = None) -> None:
    """Error answers for both surfaces; ``visitors`` lets HTML errors keep the page layout."""
    app.state.page_visitors = visitors
    app.add_exception_handler(PortalError, _handle_portal_error)
    app.add_exception_handler(RequestValidationError, _handle_request_validation)
    app.add_exception_handler(StarletteHTTPException, _handle_http_exception)
    app.add_exception_handler(Exception, _handle_unexpected)
