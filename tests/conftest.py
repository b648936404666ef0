"""Shared fixtures for the whole suite.

Databases (every database test runs on both backends):

- ``db_url``: the async URL of an empty, fully migrated database. Parametrized as
  ``sqlite`` (a temporary file) and ``postgresql`` (``PORTAL_TEST_PG_URL``, default
  ``postgresql+psycopg://postgres@127.0.0.1:5432/hpcportal_test``; created if missing, wiped
  and migrated with Alembic once per test session). Every table is emptied after each test,
  so tests may commit freely. An unreachable PostgreSQL fails the test, it never skips.
- ``sessionmaker``: an ``async_sessionmaker[AsyncSession]`` bound to ``db_url``; hand it to
  code that opens its own sessions (``unit_of_work``, the poller, ``create_app``).
- ``session``: one ``AsyncSession`` from ``sessionmaker`` for arranging data and asserting.
- ``settings``: ``Settings`` for a development app on ``db_url`` with no clusters.

Application:

- ``app``: ``create_app(settings, registry=registry, web_settings=web_settings)`` with its
  lifespan running. Override ``settings``, ``registry`` (e.g. ``fake_registry(scheduler)``
  from ``tests.factories``) or ``web_settings`` in a module, or parametrize them in a test, to
  change what it is built from; ``app.dependency_overrides`` replaces one dependency.
- ``client``: an ``httpx.AsyncClient`` talking to ``app`` in-process at http://testserver;
  server errors come back as 500 responses instead of being raised.

The seeded world:

- ``world`` (alias ``people``): the demo's people and projects with their roles, as
  ``tests/world.py`` describes; the same world the demo and the browser tests start from.

Factories for test data are plain async functions in ``tests/factories.py``.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import psycopg
import pytest
from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.config import Settings
from app.db import create_engine, create_sessionmaker, migrate_to_head
from app.main import create_app
from app.models import Base
from app.scheduler.registry import Schedulers
from app.web.settings import WebSettings
from tests.slurm_versions import HOST_VERSION
from tests.world import World, seed_world

DEFAULT_TEST_PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/hpcportal_test"
BACKENDS = ["sqlite", "postgresql"]


def postgres_test_url() -> str:
    return os.environ.get("PORTAL_TEST_PG_URL", DEFAULT_TEST_PG_URL)


def libpq_conninfo(database_url: str, database: str | None = None) -> str:
    url = make_url(database_url).set(drivername="postgresql")
    if database is not None:
        url = url.set(database=database)
    return url.render_as_string(hide_password=False)


def recreate_postgres_database(database_url: str) -> None:
    """Make ``database_url``'s database exist and hold nothing, or fail the test clearly."""
    name = make_url(database_url).database
    try:
        with psycopg.connect(libpq_conninfo(database_url, "postgres"), autocommit=True) as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
            if exists.fetchone() is None:
                conn.execute(f'CREATE DATABASE "{name}"')
        with psycopg.connect(libpq_conninfo(database_url), autocommit=True) as conn:
            conn.execute("DROP SCHEMA public CASCADE")
            conn.execute("CREATE SCHEMA public")
    except psycopg.OperationalError as error:
        pytest.fail(f"PostgreSQL at {make_url(database_url)!r} is unreachable: {error}")


@pytest.fixture(scope="session")
def sqlite_database_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    path: Path = tmp_path_factory.mktemp("sqlite") / "portal.db"
    url = f"sqlite+aiosqlite:///{path}"
    migrate_to_head(url)
    return url


@pytest.fixture(scope="session")
def postgresql_database_url() -> str:
    url = postgres_test_url()
    recreate_postgres_database(url)
    migrate_to_head(url)
    return url


# Every sequence of the schema back to 1, as TRUNCATE ... RESTART IDENTITY would.
RESTART_SEQUENCES = (
    "SELECT setval(oid, 1, false) FROM pg_class "
    "WHERE relkind = 'S' AND relnamespace = 'public'::regnamespace"
)


async def empty_all_tables(database_url: str) -> None:
    """Delete every row, children before parents, and restart the ids.

    DELETE rather than TRUNCATE on PostgreSQL: a test leaves a few rows, and TRUNCATE's new
    files for two dozen tables and their indexes cost several times more, after every test.
    """
    engine = create_engine(database_url)
    tables = [table.name for table in reversed(Base.metadata.sorted_tables)]
    try:
        async with engine.begin() as conn:
            if conn.dialect.name == "sqlite":
                # The job_templates <-> template_versions cycle has no safe delete order here;
                # PostgreSQL's job_templates.current_version_id is ON DELETE SET NULL.
                await conn.execute(text("PRAGMA defer_foreign_keys=ON"))
            for name in tables:
                await conn.execute(text(f'DELETE FROM "{name}"'))
            if conn.dialect.name == "postgresql":
                await conn.execute(text(RESTART_SEQUENCES))
    finally:
        await engine.dispose()


@pytest.fixture(params=BACKENDS)
async def db_url(request: pytest.FixtureRequest) -> AsyncIterator[str]:
    url: str = request.getfixturevalue(f"{request.param}_database_url")
    yield url
    await empty_all_tables(url)


@pytest.fixture
async def sessionmaker(db_url: str) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    engine = create_engine(db_url)
    yield create_sessionmaker(engine)
    await engine.dispose()


@pytest.fixture
async def session(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> AsyncIterator[AsyncSession]:
    async with sessionmaker() as db_session:
        yield db_session


@pytest.fixture
def settings(db_url: str) -> Settings:
    return Settings(env="dev", database_url=db_url, clusters_file=None, run_poller_in_web=False)


@pytest.fixture
async def world(sessionmaker: async_sessionmaker[AsyncSession]) -> World:
    return await seed_world(sessionmaker)


@pytest.fixture
def people(world: World) -> World:
    return world


@pytest.fixture
def registry() -> Schedulers | None:
    """The app's scheduler adapters; None builds them from ``settings`` (no clusters)."""
    return None


@pytest.fixture
def web_settings() -> WebSettings:
    return WebSettings()


@pytest.fixture
async def app(
    settings: Settings, registry: Schedulers | None, web_settings: WebSettings
) -> AsyncIterator[FastAPI]:
    application = create_app(settings, registry=registry, web_settings=web_settings)
    async with application.router.lifespan_context(application):
        yield application


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        yield http


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test on a newer Slurm version than the host's runs on PostgreSQL only.

    The database and the Slurm version are independent: SQLite is proven against the host
    version, and each further version then costs one run instead of two.
    """
    deselected = [item for item in items if _is_sqlite_on_newer_slurm(item)]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if item not in deselected]


def _is_sqlite_on_newer_slurm(item: pytest.Item) -> bool:
    params = getattr(getattr(item, "callspec", None), "params", {})
    version = params.get("slurm_version")
    return version is not None and not backend_runs_on(params.get("db_url", ""), version)


def backend_runs_on(backend: str, slurm_version: str) -> bool:
    """Whether the suite pairs database ``backend`` with that Slurm version (see above)."""
    return backend != "sqlite" or slurm_version == HOST_VERSION
