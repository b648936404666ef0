"""Version 1 of the JSON API. Breaking changes go to a new ``/api/v2`` beside it."""

from __future__ import annotations

from fastapi import APIRouter

from app.api.v1.routes import (
    clusters,
    jobs,
    logs,
    me,
    projects,
    scripts,
    tasks,
    templates,
    usage,
)
from app.api.v1.schemas import ERROR_RESPONSES

router = APIRouter(prefix="/api/v1", responses=ERROR_RESPONSES)
for module in (me, projects, clusters, templates, jobs, tasks, scripts, logs, usage):
    router.include_router(module.router)
