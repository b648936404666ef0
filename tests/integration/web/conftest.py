"""An app on the test database, a client for it and helpers to sign in through the pages."""

from __future__ import annotations

import re
from dataclasses import dataclass

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models import Project, User
from app.security import hash_password
from tests.factories import make_project, make_user

CSRF_INPUT = re.compile(r'name="csrf_token" value="([^"]+)"')


@dataclass
class People:
    alice: User
    carol: User
    bob: User
    dave: User
    admin: User
    physics: Project
    chemistry: Project


async def _add_member(session: AsyncSession, user: User, project: Project, role: str) -> None:
    from app.models import Membership

    session.add(Membership(user_id=user.id, project_id=project.id, role=role))
    await session.flush()


@pytest.fixture
async def people(sessionmaker: async_sessionmaker[AsyncSession]) -> People:
    async with sessionmaker() as session:
        password = hash_password("secret-pass")
        users = {
            login: await make_user(
                session,
                login,
                cluster_username=None if login == "admin" else login,
                password_hash=password,
                is_site_admin=login == "admin",
            )
            for login in ("alice", "carol", "bob", "dave", "admin")
        }
        physics = await make_project(session, "physics")
        chemistry = await make_project(session, "chemistry")
        await _add_member(session, users["alice"], physics, "manager")
        await _add_member(session, users["carol"], physics, "member")
        await _add_member(session, users["bob"], chemistry, "manager")
        await _add_member(session, users["dave"], chemistry, "member")
        await session.commit()
        return People(physics=physics, chemistry=chemistry, **users)


def csrf_from(html: str) -> str:
    match = CSRF_INPUT.search(html)
    assert match, "page has no CSRF field"
    return match.group(1)


async def sign_in(client: httpx.AsyncClient, login: str, password: str = "secret-pass") -> str:
    """Signs in through the form (as a fresh browser); returns the session's CSRF token."""
    client.cookies.clear()
    form = await client.get("/signin")
    response = await client.post(
        "/signin",
        data={"login": login, "password": password, "csrf_token": csrf_from(form.text)},
    )
    assert response.status_code == 303, response.text
    page = await client.get("/templates")
    return csrf_from(page.text)
