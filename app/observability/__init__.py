"""Operations: JSON logs with request ids, Prometheus metrics at ``/metrics``."""

from __future__ import annotations

import logging

from fastapi import APIRouter, FastAPI
from fastapi.responses import PlainTextResponse

from app.observability.logs import configure_json_logging
from app.observability.metrics import ALL_METRICS, exposition
from app.observability.middleware import ObservabilityMiddleware

router = APIRouter()
PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8"


@router.get("/metrics", include_in_schema=False)
async def metrics() -> PlainTextResponse:
    return PlainTextResponse(exposition(ALL_METRICS), media_type=PROMETHEUS_TEXT)


def install(app: FastAPI) -> None:
    """Add the request middleware and the metrics route; JSON logs unless already configured."""
    # A host that configured logging itself (a test runner, a site's dictConfig) keeps it.
    if not logging.getLogger().handlers:
        configure_json_logging()
    app.add_middleware(ObservabilityMiddleware)
    app.include_router(router)
