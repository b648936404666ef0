"""Application factory: ``uvicorn --factory app.main:create_app``.

Settings and cluster files are checked when the app is created, so a bad configuration stops
start-up with a readable list of problems. The database engine only exists while the app runs
(lifespan), never at import.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import Response
from fastapi.staticfiles import StaticFiles

from app import api, health
from app.config import Settings, load_cluster_configs, load_settings
from app.db import create_engine, create_sessionmaker
from app.errors import install_error_handlers
from app.security import SecurityHeadersMiddleware
from app.templating import render
from app.web import admin, admin_audit, dashboard, logs_stream, usage
from app.web import jobs as job_pages
from app.web.router import router as web_router

STATIC_DIR = Path(__file__).resolve().parent.parent / "static"

pages = APIRouter()


@pages.get("/", include_in_schema=False)
async def home(request: Request) -> Response:
    return render(request, "home.html", {"clusters": sorted(request.app.state.clusters)})


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    settings: Settings = app.state.settings
    engine = create_engine(settings.database_url)
    app.state.engine = engine
    app.state.sessionmaker = create_sessionmaker(engine)
    try:
        yield
    finally:
        await engine.dispose()


def include_routers(app: FastAPI) -> None:
    app.include_router(health.router)
    api.install(app)
    app.include_router(pages)
    app.include_router(web_router)
    for router in (job_pages.router, job_pages.actions, logs_stream.router, dashboard.router):
        app.include_router(router)
    for router in (admin.router, admin_audit.router, usage.router):
        app.include_router(router)


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the portal; with no ``settings`` they are read from the environment."""
    settings = settings or load_settings()
    clusters = load_cluster_configs(settings)
    app = FastAPI(
        title="HPC Portal",
        lifespan=lifespan,
        docs_url="/api/docs",
        openapi_url="/api/openapi.json",
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.clusters = clusters
    install_error_handlers(app)
    app.add_middleware(SecurityHeadersMiddleware)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    include_routers(app)
    return app
