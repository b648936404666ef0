"""Shared fixtures for the whole suite.

Databases (PostgreSQL for every database test; SQLite too for the portability tier):

- ``db_url``: the async URL of an empty, fully migrated database: ``postgresql``
  (``PORTAL_TEST_PG_URL``, default
  ``postgresql+psycopg://postgres@127.0.0.1:5432/hpcportal_test``, one database per
  pytest-xdist worker, ``<name>_gw0``...; created if missing, wiped and migrated with Alembic
  once per test session), and also ``sqlite`` (a temporary file) in modules marked
  ``pytest.mark.sqlite`` (migrations, repositories, page smoke; ADR 0018). Every table is
  emptied after each test, so tests may commit freely. An unreachable PostgreSQL fails the
  test, it never skips.
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

Lanes (``--lane unit,db,slurm,browser,faults``, see ``tests/lanes.py``) select tests by
kind; under ``--dist loadgroup`` each Slurm version's tests form one pytest-xdist group, so
the clusters are tested side by side and each cluster's tests one after another.

The seeded world:

- ``world`` (alias ``people``): the demo's people and projects with their roles, as
  ``tests/world.py`` describes; the same world the demo and the browser tests start from.

Factories for test data are plain async functions in ``tests/factories.py``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

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
from app.models.catalogue import metadata
from app.scheduler.registry import Schedulers
from app.web.settings import WebSettings
from tests.lanes import add_lane_option, select_lanes
from tests.portal import recreate_postgres_database as recreate_database
from tests.portal import worker_database_url
from tests.world import World, seed_world

BACKENDS = ["sqlite", "postgresql"]


def postgres_test_url() -> str:
    """This worker's PostgreSQL test database (``PORTAL_TEST_PG_URL``, ``_gwN`` under xdist)."""
    return worker_database_url()


def recreate_postgres_database(database_url: str) -> None:
    """Make ``database_url``'s database exist and hold nothing, or fail the test clearly."""
    try:
        recreate_database(database_url)
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
    tables = [table.name for table in reversed(metadata.sorted_tables)]
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


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """PostgreSQL for every database test; SQLite as well in modules marked ``sqlite``."""
    # A module's own db_url (PostgreSQL only, e.g. for SFTP file tests) ignores the parameter.
    if "db_url" not in metafunc.fixturenames:
        return
    portable = metafunc.definition.get_closest_marker("sqlite") is not None
    metafunc.parametrize("db_url", BACKENDS if portable else ["postgresql"], indirect=True)


@pytest.fixture
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


def pytest_addoption(parser: pytest.Parser) -> None:
    add_lane_option(parser)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    select_lanes(config, items)
    if config.pluginmanager.hasplugin("xdist"):
        from tests.lane_groups import write_groups

        write_groups(config, items)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A failed test on the PBS cluster shows the PBS server's log beside its output."""
    report = yield
    if report.failed and item.get_closest_marker("pbs") is not None:
        from tests.other_schedulers import pbs_server_log

        report.sections.append(("PBS server log", pbs_server_log()))
    return report


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    from tests.lane_groups import configure_node

    configure_node(node)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup``: each Slurm version's tests, and the browser's, in one worker."""
    if config.getoption("dist") != "loadgroup":
        return None
    from tests.lane_groups import GroupScheduling

    return GroupScheduling(config, log)
