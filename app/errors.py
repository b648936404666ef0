"""The portal's one error hierarchy, plain exceptions that know nothing of the web.

Services raise these; routes never build error responses themselves. Each surface says how
they are shown (app/api/v1/errors.py as JSON, app/web/error_pages.py as HTML; the two are
installed together by app/error_handlers.py). The public message is safe to show to the user;
anything else (tracebacks, SQL) only goes to the log.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from babel.support import LazyProxy

from app.i18n import lazy_gettext


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


def refused_field(location: Sequence[Any]) -> str:
    """The field a refused value was given in (``limits.cpus``), from where a request
    validator located it (``("body", "limits", "cpus")``)."""
    parts = [str(part) for part in location]
    if parts and parts[0] in ("body", "query", "path", "header", "cookie", "form"):
        parts = parts[1:]
    return ".".join(parts) or "request"
