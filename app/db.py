"""Engine and session construction, the unit-of-work helper and programmatic migrations.

Nothing here runs at import time: the application lifespan (or a script) builds the engine
from settings, so tests can point each app instance at its own database.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

# Every model is loaded before any session exists, so a foreign key always finds its table.
from app.models import catalogue as _catalogue  # noqa: F401

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SQLITE_BUSY_TIMEOUT_MS = 5000
DEFAULT_POOL_SIZE = 10
DEFAULT_MAX_OVERFLOW = 20


def is_sqlite_url(database_url: str) -> bool:
    return make_url(database_url).get_backend_name() == "sqlite"


def _configure_sqlite_connection(dbapi_connection: Any, _record: Any) -> None:
    # Foreign keys are off by default in SQLite, and WAL lets the poller write while pages read.
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
    finally:
        cursor.close()


def _ensure_sqlite_directory(database_url: str) -> None:
    database = make_url(database_url).database
    if database and database != ":memory:" and not database.startswith("file:"):
        Path(database).parent.mkdir(parents=True, exist_ok=True)


def create_engine(
    database_url: str,
    *,
    echo: bool = False,
    pool_size: int = DEFAULT_POOL_SIZE,
    max_overflow: int = DEFAULT_MAX_OVERFLOW,
) -> AsyncEngine:
    """An async engine for SQLite (aiosqlite) or PostgreSQL (psycopg 3)."""
    if is_sqlite_url(database_url):
        _ensure_sqlite_directory(database_url)
        engine = create_async_engine(database_url, echo=echo)
        event.listen(engine.sync_engine, "connect", _configure_sqlite_connection)
        return engine
    return create_async_engine(
        database_url,
        echo=echo,
        pool_pre_ping=True,
        pool_size=pool_size,
        max_overflow=max_overflow,
    )


def create_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    # Objects stay usable after commit, e.g. when a route renders what it just saved.
    return async_sessionmaker(engine, expire_on_commit=False)


@asynccontextmanager
async def unit_of_work(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> AsyncIterator[AsyncSession]:
    """One transaction for code outside a request: commit once on success, else roll back."""
    async with sessionmaker() as session:
        try:
            yield session
            await session.commit()
        except BaseException:
            await session.rollback()
            raise


async def release_connection(session: AsyncSession) -> None:
    """Ends the session's transaction so its pooled connection is free during a cluster call.

    A submit or job command waits seconds on SSH or HTTP while the jobs service opens its own
    short sessions; a request session still holding its connection meanwhile would need two
    connections per command and starve the pool under concurrent submits. The session stays
    usable: the next query takes a connection again. Only a read phase may end this way
    (ADR 0001): pending changes would be committed halfway through the request.
    """
    if session.new or session.dirty or session.deleted:
        raise RuntimeError("release_connection() would commit changes the request has not finished")
    await session.commit()


# The session of the request this task serves, with the task: a task the request starts
# inherits the variable, and must not end a transaction another task is using.
_REQUEST_SESSION: ContextVar[tuple[asyncio.Task[Any] | None, AsyncSession] | None] = ContextVar(
    "request_session", default=None
)


def bind_request_session(session: AsyncSession | None) -> None:
    """Names ``session`` as the current request's (None when the request is done)."""
    _REQUEST_SESSION.set(None if session is None else (asyncio.current_task(), session))


async def free_request_session() -> None:
    """Ends the current request's read phase before a remote call (see release_connection).

    Called by every scheduler adapter and app-server client a request reaches, so no route or
    use case has to remember it: a cluster that answers in seconds never holds a pooled
    connection, or SQLite's write lock, for that long.
    """
    bound = _REQUEST_SESSION.get()
    if bound is None:
        return
    task, session = bound
    if task is asyncio.current_task() and session.in_transaction():
        await release_connection(session)


def sync_database_url(database_url: str) -> str:
    """The synchronous URL Alembic uses for an application (async) database URL."""
    url = make_url(database_url)
    if url.drivername == "sqlite+aiosqlite":
        url = url.set(drivername="sqlite")
    elif url.drivername in ("postgresql+asyncpg", "postgresql"):
        url = url.set(drivername="postgresql+psycopg")
    return url.render_as_string(hide_password=False)


def alembic_config(database_url: str) -> Any:
    from alembic.config import Config

    config = Config(str(PROJECT_ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(PROJECT_ROOT / "migrations"))
    # Percent signs in passwords would otherwise be read as interpolation.
    config.set_main_option("sqlalchemy.url", sync_database_url(database_url).replace("%", "%%"))
    config.attributes["configure_logger"] = False
    return config


def migrate_to_head(database_url: str) -> None:
    """Upgrade the database at ``database_url`` to the latest Alembic revision."""
    from alembic import command

    if is_sqlite_url(database_url):
        _ensure_sqlite_directory(database_url)
    command.upgrade(alembic_config(database_url), "head")


def include_for_dialect(dialect_name: str) -> Any:
    """An Alembic ``include_object`` that skips schema objects meant for other dialects.

    Alembic's comparison ignores ``ddl_if``, so a PostgreSQL-only index would otherwise be
    reported missing on SQLite.
    """

    def include(obj: Any, name: str | None, type_: str, reflected: bool, other: Any) -> bool:
        condition = getattr(obj, "_ddl_if", None)
        return condition is None or condition.dialect in (None, dialect_name)

    return include
