"""A live portal on the real cluster for attacks that must reach sbatch, and how to act on it.

``live_portal`` (session scope) is a uvicorn process with the in-process poller on its own
PostgreSQL database ``<PORTAL_TEST_PG_URL database>_security``, migrated and seeded with the
demo users. ``signed_in(portal, login)`` gives a synchronous client with a web session and
its CSRF token; ``api_token`` an API token.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx
import pytest
from sqlalchemy import select, text

from app.db import create_engine, create_sessionmaker
from app.models.job_templates import JobTemplate
from app.models.projects import Project
from app.models.users import User
from app.tokens import service as tokens
from app.users.service import actor_for
from tests.portal import PortalProcess, seeded_database

CSRF_INPUT = re.compile(r'name="csrf_token" value="([^"]+)"')
PROXY = "127.0.0.1"
ATTACKER = "127.0.0.2"


@pytest.fixture(scope="session")
def live_portal(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PortalProcess]:
    url = seeded_database("security")
    process = PortalProcess(url, tmp_path_factory.mktemp("security") / "portal.log")
    # 127.0.0.1 plays a reverse proxy; attackers connect from 127.0.0.2 (PROXY, ATTACKER).
    process.env["PORTAL_TRUSTED_PROXIES"] = PROXY
    process.start()
    try:
        yield process
    finally:
        process.stop()


@dataclass
class WebUser:
    client: httpx.Client
    csrf: str


def csrf_from(html: str) -> str:
    match = CSRF_INPUT.search(html)
    assert match, "page without a CSRF token"
    return match.group(1)


@contextmanager
def signed_in(portal: PortalProcess, login: str) -> Iterator[WebUser]:
    with httpx.Client(base_url=portal.base_url, timeout=60) as client:
        form = client.get("/signin")
        data = {"login": login, "password": f"{login}-demo", "csrf_token": csrf_from(form.text)}
        answer = client.post("/signin", data=data)
        assert answer.status_code == 303, answer.status_code
        yield WebUser(client, csrf_from(client.get("/settings/tokens").text))


async def _token(url: str, login: str, scopes: list[str], lifetime_days: int) -> str:
    engine = create_engine(url)
    try:
        async with create_sessionmaker(engine)() as session:
            user = (await session.scalars(select(User).where(User.login == login))).one()
            created = await tokens.create_token(
                session,
                await actor_for(session, user),
                name=f"security-{time.monotonic_ns()}",
                scopes=scopes,
                lifetime_days=lifetime_days,
            )
            await session.commit()
            return created.secret
    finally:
        await engine.dispose()


def api_token(portal: PortalProcess, login: str, scopes: list[str] | None = None) -> str:
    return asyncio.run(_token(portal.database_url, login, scopes or ["submit"], 1))


async def _ids(url: str, project: str, template: str) -> tuple[int, int]:
    engine = create_engine(url)
    try:
        async with create_sessionmaker(engine)() as session:
            found = await session.scalars(select(Project.id).where(Project.name == project))
            named = await session.scalars(
                select(JobTemplate.id).where(JobTemplate.name == template)
            )
            return found.one(), named.one()
    finally:
        await engine.dispose()


def project_and_template(portal: PortalProcess, project: str, template: str) -> tuple[int, int]:
    return asyncio.run(_ids(portal.database_url, project, template))


async def _execute(
    url: str, statement: str, parameters: dict[str, object]
) -> list[tuple[object, ...]]:
    engine = create_engine(url)
    try:
        async with engine.begin() as conn:
            result = await conn.execute(text(statement), parameters)
            return [tuple(row) for row in result] if result.returns_rows else []
    finally:
        await engine.dispose()


def run_sql(
    portal: PortalProcess, statement: str, **parameters: object
) -> list[tuple[object, ...]]:
    """Runs one statement on the live portal's database, as a site with old data would have it."""
    return asyncio.run(_execute(portal.database_url, statement, parameters))


def user_id(portal: PortalProcess, login: str) -> int:
    rows = run_sql(portal, "SELECT id FROM users WHERE login = :login", login=login)
    return int(str(rows[0][0]))
