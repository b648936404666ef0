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
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import urlsplit

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from app import health
from app.api import docs as api_docs
from app.api.v1 import registry as api_v1
from app.config import (
    ConfigError,
    Settings,
    load_cluster_configs,
    load_settings,
    unknown_variables,
)
from app.error_handlers import install_error_handlers
from app.interactive.definitions import load_app_definitions
from app.observability.metrics import forget_process
from app.observability.scheduler import InstrumentedRegistry
from app.poller.idle import IdleWatch
from app.poller.runner import run_poller
from app.request_bodies import check_sender, max_body_bytes
from app.scheduler.registry import Schedulers
from app.templating import templates
from app.web import observability as web_observability
from app.web import render_pool
from app.web import router as web_pages
from app.web.app_host import AppHostMiddleware
from app.web.http_guards import BodyLimitMiddleware, SecurityHeadersMiddleware
from app.web.language import LocaleMiddleware
from app.web.proxies import ForwardedForMiddleware
from app.web.settings import WebSettings, load_web_settings
from app.wiring import Services, build_services, services_of

logger = logging.getLogger(__name__)
# A poll cycle in flight is allowed to finish and write its transaction before shutdown.
POLLER_STOP_SECONDS = 15.0
# app/_static is the top-level static/ (a link in a checkout, copied files when installed).
STATIC_DIR = Path(__file__).resolve().parent / "_static"


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    services = services_of(app)
    stop = asyncio.Event()
    poller = _start_poller(services, stop)
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


def _start_poller(services: Services, stop: asyncio.Event) -> asyncio.Task[None] | None:
    """The single-machine default: the poller runs as a task of the web process."""
    registry = services.schedulers
    if not services.settings.should_run_poller_in_web or not list(registry):
        return None
    adapters = {name: registry.get(name) for name in registry}
    idle = IdleWatch.of(services.settings, services.apps, services.http)
    poller = run_poller(
        services.settings, services.sessionmaker, adapters, stop, board=services.tasks, idle=idle
    )
    return asyncio.create_task(poller, name="poller")


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
    """The operations endpoints, then one registry per surface."""
    app.include_router(health.router)
    app.include_router(api_docs.router)
    for routes in api_v1.ROUTERS:
        app.include_router(
            routes, prefix=api_v1.PREFIX, generate_unique_id_function=api_v1.operation_id
        )
    app.openapi_tags = api_v1.TAGS
    for pages in web_pages.ROUTERS:
        app.include_router(pages)


def _check_environment(settings: Settings) -> None:
    """A misspelt PORTAL_ variable stops a production start and is logged elsewhere."""
    problems = unknown_variables(os.environ, (Settings, WebSettings))
    if problems and settings.is_production:
        raise ConfigError(problems)
    for problem in problems:
        logger.warning("configuration: %s", problem)


def _check_apps_domain(settings: Settings, web: WebSettings) -> None:
    # Not refused: a site may run no interactive apps, or try the portal on one machine first.
    if settings.is_production and (web.apps_domain + ".").endswith(".localhost."):
        logger.warning(
            "configuration: PORTAL_APPS_DOMAIN is %s, so interactive apps open only in a "
            "browser on the portal's own machine; set a domain with a wildcard DNS record "
            "and certificate (ADR 0019)",
            web.apps_domain,
        )


def _form_targets(settings: Settings) -> tuple[str, ...]:
    """Origins a form's answer may lead to: the identity provider's, for its logout."""
    if not settings.is_oidc_enabled:
        return ()
    issuer = urlsplit(settings.oidc_issuer)
    return (f"{issuer.scheme}://{issuer.netloc}",)


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
    # In production the templates are those installed: no file is checked for a change on
    # every render (a job list extends and imports six).
    templates().env.auto_reload = not settings.is_production
    app.state.web_settings = web_settings or load_web_settings()
    _check_apps_domain(settings, app.state.web_settings)
    install_error_handlers(app)
    # Innermost: an app's host reaches none of the portal's routes, yet gets every other
    # layer (addresses, limits, metrics, security headers) as the portal's requests do.
    app.add_middleware(AppHostMiddleware)
    app.add_middleware(SecurityHeadersMiddleware, form_targets=_form_targets(settings))
    app.add_middleware(LocaleMiddleware)
    web_observability.install(app)
    app.add_middleware(BodyLimitMiddleware, max_bytes=max_body_bytes, before_body=check_sender)
    # Outermost, so every other layer sees the address it resolved.
    app.add_middleware(ForwardedForMiddleware)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    include_routers(app)
    return app
