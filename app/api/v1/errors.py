"""Scheduler errors that escape the services, shown in the API's one error format.

The services already translate most scheduler errors; these handlers are the safety net that
keeps an unreachable cluster or a refused submission from ever becoming a 500.
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from app.errors import PortalError, ServiceUnavailable, ValidationFailed, error_response
from app.scheduler.errors import (
    InvalidSpec,
    PreflightFailed,
    SchedulerUnavailable,
    SubmitRejected,
)

logger = logging.getLogger(__name__)


class BadRequest(PortalError):
    status_code = 400
    default_detail = "The request is malformed."


def rejection_body(error: SubmitRejected) -> dict[str, str]:
    return {
        "error": "SubmitRejected",
        "detail": error.message,
        "kind": str(error.kind),
        "raw": error.raw,
    }


async def _handle_rejected(request: Request, error: Exception) -> Response:
    assert isinstance(error, SubmitRejected)
    if request.url.path.startswith("/api/"):
        return JSONResponse(rejection_body(error), status_code=422)
    return error_response(request, ValidationFailed(error.message))


async def _handle_preflight(request: Request, error: Exception) -> Response:
    assert isinstance(error, PreflightFailed)
    fields = {field: message for field, message in error.problems}
    failure = ValidationFailed("The cluster would refuse this job.", fields, error.raw)
    return error_response(request, failure)


async def _handle_invalid_spec(request: Request, error: Exception) -> Response:
    assert isinstance(error, InvalidSpec)
    return error_response(request, ValidationFailed(fields={error.field: error.message}))


async def _handle_unavailable(request: Request, error: Exception) -> Response:
    assert isinstance(error, SchedulerUnavailable)
    logger.warning("scheduler unavailable on %s: %s", request.url.path, error)
    detail = "The cluster did not answer; try again shortly."
    return error_response(request, ServiceUnavailable(detail))


def install_scheduler_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(SubmitRejected, _handle_rejected)
    app.add_exception_handler(PreflightFailed, _handle_preflight)
    app.add_exception_handler(InvalidSpec, _handle_invalid_spec)
    app.add_exception_handler(SchedulerUnavailable, _handle_unavailable)
