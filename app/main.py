"""Application factory: ``uvicorn --factory app.main:create_app``.

Settings and cluster files are checked when the app is created, so a bad configuration stops
start-up with a readable list of problems. The database engine only exists while the app runs
(lifespan), never at import.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from starlette.types import Scope

from app import api, health, observability
from app.api import docs as api_docs
from app.config import (
    ConfigError,
    Settings,
    load_app_definitions,
    load_cluster_configs,
    load_settings,
    unknown_variables,
)
from app.errors import install_error_handlers
from app.files.service import UPLOAD_PART_BYTES
from app.observability.metrics import forget_process
from app.observability.scheduler import InstrumentedRegistry
from app.poller.runner import run_poller
from app.scheduler.registry import Schedulers
from app.security import BodyLimitMiddleware, SecurityHeadersMiddleware
from app.templating import render
from app.web import (
    admin,
    admin_audit,
    app_proxy,
    apps,
    dashboard,
    logs_stream,
    render_pool,
    tokens,
    usage,
)
from app.web import jobs as job_pages
from app.web.auth import WebContextDep
from app.web.error_pages import WebVisitors
from app.web.language import LocaleMiddleware
from app.web.proxies import ForwardedForMiddleware
from app.web.router import router as web_router
from app.web.settings import WebSettings, load_web_settings, web_settings_of
from app.wiring import build_services, services_of

logger = logging.getLogger(__name__)
# A poll cycle in flight is allowed to finish and write its transaction before shutdown.
POLLER_STOP_SECONDS = 15.0
# Interactive apps' paths (app_proxy), whose bodies stream through unread.
APP_PROXY_PREFIX = "/apps/sessions/"
UNLIMITED_BODY = 2**62
# A piece of a file upload, on the pages and the API: sized by the upload protocol, not by
# the site's limit for forms, so a lower PORTAL_MAX_BODY_BYTES cannot break uploads.
UPLOAD_PART_PATH = re.compile(r"(/api/v1)?/files/[^/]+/uploads/[0-9a-f]{32}")
# app/_static is the top-level static/ (a link in a checkout, copied files when installed).
STATIC_DIR = Path(__file__).resolve().parent / "_static"

pages = APIRouter()


@pages.get("/", include_in_schema=False)
async def home(request: Request, context: WebContextDep) -> Response:
    # Signed-in researchers land on their own jobs; the welcome page is for visitors.
    if context.actor is not None:
        return RedirectResponse(request.url_for("dashboard"), status_code=303)
    clusters = services_of(request.app).cluster_names
    return render(request, "home.html", {"clusters": clusters})


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    services = services_of(app)
    stop = asyncio.Event()
    poller = _start_poller(services.settings, services.sessionmaker, services.schedulers, stop)
    # Ready means previews too: workers importing the portal would otherwise compete with
    # the first requests for the CPU.
    await render_pool.warm()
    try:
        yield
    finally:
        stop.set()
        if poller is not None:
            await _stop_poller(poller)
        await services.schedulers.close()
        await services.http.aclose()
        await services.engine.dispose()
        forget_process(os.getpid())


def _start_poller(
    settings: Settings,
    sessionmaker: async_sessionmaker[AsyncSession],
    registry: Schedulers,
    stop: asyncio.Event,
) -> asyncio.Task[None] | None:
    """The single-machine default: the poller runs as a task of the web process."""
    if not settings.should_run_poller_in_web or not list(registry):
        return None
    adapters = {name: registry.get(name) for name in registry}
    return asyncio.create_task(run_poller(settings, sessionmaker, adapters, stop), name="poller")


async def _stop_poller(task: asyncio.Task[None]) -> None:
    try:
        await asyncio.wait_for(task, timeout=POLLER_STOP_SECONDS)
    except TimeoutError:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    except Exception:
        logger.exception("the in-process poller ended with an error")


def include_routers(app: FastAPI) -> None:
    app.include_router(health.router)
    app.include_router(api_docs.router)
    api.install(app)
    app.include_router(pages)
    app.include_router(web_router)
    for router in (job_pages.router, job_pages.actions, logs_stream.router, dashboard.router):
        app.include_router(router)
    for router in (admin.router, admin_audit.router, usage.router):
        app.include_router(router)
    app.include_router(tokens.router)
    app.include_router(apps.router)
    app.include_router(app_proxy.router)


def _max_body_bytes(scope: Scope) -> int:
    # An interactive app's requests stream to its server unread (uploads, notebook saves);
    # the portal holds none of them, so its own limit does not apply.
    if str(scope.get("path", "")).startswith(APP_PROXY_PREFIX):
        return UNLIMITED_BODY
    if UPLOAD_PART_PATH.fullmatch(str(scope.get("path", ""))):
        return UPLOAD_PART_BYTES
    return web_settings_of(scope["app"]).max_body_bytes


def _check_environment(settings: Settings) -> None:
    """A misspelt PORTAL_ variable stops a production start and is logged elsewhere."""
    problems = unknown_variables(os.environ, (Settings, WebSettings))
    if problems and settings.is_production:
        raise ConfigError(problems)
    for problem in problems:
        logger.warning("configuration: %s", problem)


def create_app(
    settings: Settings | None = None,
    *,
    registry: Schedulers | None = None,
    web_settings: WebSettings | None = None,
) -> FastAPI:
    """Build the portal and everything it runs on (``app.wiring``), checked before it serves.

    With no ``settings`` they are read from the environment; ``registry`` replaces the
    scheduler adapters the clusters file describes (a test's scheduler, another transport).
    """
    settings = settings or load_settings()
    _check_environment(settings)
    clusters = load_cluster_configs(settings)
    apps = load_app_definitions(settings)
    schedulers = registry if registry is not None else InstrumentedRegistry(clusters)
    app = FastAPI(
        title="HPC Portal",
        lifespan=lifespan,
        docs_url=None,
        openapi_url="/api/openapi.json",
        redoc_url=None,
    )
    app.state.services = build_services(settings, clusters, schedulers, apps)
    app.state.web_settings = web_settings or load_web_settings()
    install_error_handlers(app, WebVisitors())
    app.add_middleware(SecurityHeadersMiddleware)
    app.add_middleware(LocaleMiddleware)
    observability.install(app)
    app.add_middleware(BodyLimitMiddleware, max_bytes=_max_body_bytes)
    # Outermost, so every other layer sees the address it resolved.
    app.add_middleware(ForwardedForMiddleware)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    include_routers(app)
    return app
