"""The API's one error format: ``{"error": type, "detail": message}``, with the refused fields
of a validation failure and what Slurm itself said when the refusal came from it.

app/error_handlers.py sends here every error raised while answering an ``/api/`` address.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response

from app.errors import PortalError, ValidationFailed, refused_field
from app.scheduler.errors import SubmitRejected


class BadRequest(PortalError):
    status_code = 400
    default_detail = "The request is malformed."


def json_error_response(error: PortalError, headers: Mapping[str, str] | None = None) -> Response:
    body: dict[str, Any] = {"error": error.error_type, "detail": error.detail}
    if isinstance(error, ValidationFailed):
        body["fields"] = error.fields
        if error.raw:
            body["raw"] = error.raw
    return JSONResponse(body, status_code=error.status_code, headers=headers)


def rejection_response(error: SubmitRejected) -> Response:
    """A submission Slurm refused, with the kind of refusal a script can act on."""
    return JSONResponse(rejection_body(error), status_code=422)


def rejection_body(error: SubmitRejected) -> dict[str, str]:
    return {
        "error": "SubmitRejected",
        "detail": error.message,
        "kind": str(error.kind),
        "raw": error.raw,
    }


def validation_failure(error: RequestValidationError) -> ValidationFailed:
    """Pydantic's refusals as they were said, one a field."""
    fields: dict[str, str] = {}
    for item in error.errors():
        fields.setdefault(refused_field(item.get("loc", ())), str(item.get("msg", "invalid")))
    return ValidationFailed(fields=fields)
