"""What the portal is built from, created once by ``create_app`` and reached by dependencies.

Everything a request needs that outlives it (the database engine, the scheduler adapters, the
jobs service) is built here in one place, so no route or helper ever builds its own. Tests
pass their own scheduler registry to ``create_app`` or override a dependency from
``app.deps``; nothing is patched onto a running application.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from app.cluster_calls import ReleasingSchedulers
from app.config import Settings
from app.db import create_engine, create_sessionmaker
from app.files.service import FilesService
from app.interactive.definitions import AppDefinition
from app.interactive.upstream import upstream_client
from app.jobs.service import JobService
from app.observability.supervisor import TaskBoard
from app.scheduler.cache import TtlCache
from app.scheduler.config import ClusterConfig
from app.scheduler.registry import Schedulers
from app.shell.service import ShellService
from app.storage.service import DiskUsageService
from app.submissions.choices import SubmitChoices
from app.users.oidc import OidcClient, OidcConfig

# An owner's access to a running session, answered from memory for this long (ADR 0033).
REACH_SECONDS = 1.0
REACHES_KEPT = 4096


@dataclass(frozen=True, slots=True)
class Services:
    settings: Settings
    # The clusters file as read; a test registry may name clusters that have no entry here.
    clusters: Mapping[str, ClusterConfig]
    engine: AsyncEngine
    sessionmaker: async_sessionmaker[AsyncSession]
    schedulers: Schedulers
    jobs: JobService
    disk_usage: DiskUsageService
    files: FilesService
    choices: SubmitChoices
    shells: ShellService
    cluster_names: tuple[str, ...] = field(default=())
    apps: Mapping[str, AppDefinition] = field(default_factory=dict)
    # For interactive apps' servers on compute nodes: readiness checks and the proxy.
    http: httpx.AsyncClient = field(default_factory=upstream_client)
    # The background tasks this process supervises (the in-process poller's), for /healthz.
    tasks: TaskBoard = field(default_factory=TaskBoard)
    # The identity provider, when single sign-on is configured (ADR 0028).
    oidc: OidcClient | None = None
    # Who may reach which session, kept a second for an app's own requests (app/web/app_host.py).
    reaches: TtlCache[tuple[int, str], object] = field(
        default_factory=lambda: TtlCache(REACH_SECONDS, most=REACHES_KEPT)
    )


def oidc_client(settings: Settings) -> OidcClient | None:
    if not settings.is_oidc_enabled:
        return None
    return OidcClient(
        OidcConfig(
            issuer=settings.oidc_issuer,
            client_id=settings.oidc_client_id,
            client_secret=settings.oidc_client_secret.get_secret_value(),
            scopes=settings.oidc_scopes,
            clock_skew=settings.oidc_clock_skew,
            timeout=settings.oidc_timeout,
            username_claim=settings.oidc_username_claim,
        )
    )


def build_services(
    settings: Settings,
    clusters: Mapping[str, ClusterConfig],
    schedulers: Schedulers,
    apps: Mapping[str, AppDefinition],
) -> Services:
    # The engine connects on first use, so building it here opens nothing.
    engine = create_engine(
        settings.database_url,
        pool_size=settings.db_pool_size,
        max_overflow=settings.db_max_overflow,
    )
    sessionmaker = create_sessionmaker(engine)
    schedulers = ReleasingSchedulers(schedulers)
    roots = {name: tuple(config.log_roots) for name, config in clusters.items()}
    return Services(
        settings=settings,
        clusters=clusters,
        engine=engine,
        sessionmaker=sessionmaker,
        schedulers=schedulers,
        jobs=JobService(sessionmaker, schedulers, roots),
        disk_usage=DiskUsageService(schedulers),
        files=FilesService(
            schedulers, {name: config.browse_roots for name, config in clusters.items()}
        ),
        choices=SubmitChoices(clusters, schedulers, tuple(sorted(schedulers))),
        shells=ShellService(settings, schedulers, sessionmaker),
        cluster_names=tuple(sorted(schedulers)),
        apps=apps,
        oidc=oidc_client(settings),
    )


def services_of(app: Any) -> Services:
    """The services ``create_app`` attached to ``app`` (a FastAPI app or a Starlette one)."""
    services: Services = app.state.services
    return services
