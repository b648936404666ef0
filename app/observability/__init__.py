"""Operations: JSON logs with request ids, Prometheus metrics at ``/metrics``."""

from __future__ import annotations

import logging

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import PlainTextResponse

from app.errors import NotFound
from app.observability.logs import configure_json_logging
from app.observability.middleware import ObservabilityMiddleware
from app.observability.serve import PROMETHEUS_TEXT, metrics_text
from app.web.proxies import is_operations_request

router = APIRouter()


@router.get("/metrics", include_in_schema=False)
async def metrics(request: Request) -> PlainTextResponse:
    # Route names, error counts and timings describe the site: for monitoring hosts only.
    if not is_operations_request(request):
        raise NotFound()
    return PlainTextResponse(metrics_text(), media_type=PROMETHEUS_TEXT)


def install(app: FastAPI) -> None:
    """Add the request middleware and the metrics route; JSON logs unless already configured."""
    # A host that configured logging itself (a test runner, a site's dictConfig) keeps it.
    if not logging.getLogger().handlers:
        configure_json_logging()
    app.add_middleware(ObservabilityMiddleware)
    app.include_router(router)
