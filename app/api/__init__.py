"""The versioned JSON API (``/api/v1``) for scripts and the command-line client."""

from __future__ import annotations

from fastapi import FastAPI

from app.api.v1 import TAGS
from app.api.v1 import router as v1_router
from app.api.v1.errors import install_scheduler_error_handlers


def install(app: FastAPI) -> None:
    """Add every API version and the handlers that turn scheduler errors into answers."""
    install_scheduler_error_handlers(app)
    app.include_router(v1_router)
    app.openapi_tags = TAGS
