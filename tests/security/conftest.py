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
from sqlalchemy import select

from app.db import create_engine, create_sessionmaker
from app.models import JobTemplate, Project, User
from app.tokens import service as tokens
from app.users.service import actor_for
from tests.faults.conftest import PortalProcess, seeded_database

CSRF_INPUT = re.compile(r'name="csrf_token" value="([^"]+)"')


@pytest.fixture(scope="session")
def live_portal(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PortalProcess]:
    url = seeded_database("security")
    process = PortalProcess(url, tmp_path_factory.mktemp("security") / "portal.log")
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
