"""Password spraying (one guess per login, from many addresses) meets the site-wide limit;
counters whose window has passed are purged."""

from datetime import timedelta

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models.audit import AuditEvent
from app.models.base import utc_now
from app.models.web_sessions import SignInCounter
from app.web.settings import WebSettings
from tests.integration.web.conftest import csrf_from
from tests.world import World

# The portability tier: these also run on SQLite (ADR 0018).
pytestmark = pytest.mark.sqlite


async def _sign_in_from(app: FastAPI, address: str, login: str, password: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=app, client=(address, 40000))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        form = await client.get("/signin")
        data = {"login": login, "password": password, "csrf_token": csrf_from(form.text)}
        return await client.post("/signin", data=data)


@pytest.mark.parametrize("web_settings", [WebSettings(signin_site_limit=3)])
async def test_spraying_one_password_over_many_logins_meets_the_site_limit(
    app: FastAPI, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    for index, login in enumerate(("alice", "bob", "carol")):
        answer = await _sign_in_from(app, f"198.51.100.{index}", login, "Winter2026!")
        assert answer.status_code == 401
    answer = await _sign_in_from(app, "203.0.113.7", "dave", "secret-pass")
    assert answer.status_code == 429
    assert "Too many failed sign-ins on the portal, try again in 5 minutes." in answer.text
    async with sessionmaker() as session:
        failed = await session.scalars(
            select(AuditEvent).where(AuditEvent.action == "auth.sign_in_failed")
        )
        seen = {(event.address, event.details["login"]) for event in failed}
    assert ("198.51.100.0", "alice") in seen and ("203.0.113.7", "dave") in seen


@pytest.mark.parametrize("web_settings", [WebSettings(signin_site_limit=2)])
async def test_a_success_gives_its_slot_back_to_the_site_limit(app: FastAPI, people: World) -> None:
    for index in range(5):
        answer = await _sign_in_from(app, f"198.51.100.{index}", "alice", "secret-pass")
        assert answer.status_code == 303


async def test_counters_from_past_windows_are_purged(
    app: FastAPI, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    async with sessionmaker() as session:
        old = utc_now() - timedelta(minutes=6)
        session.add(SignInCounter(key="login:gone", window_start=old, attempts=5))
        await session.commit()
    await _sign_in_from(app, "198.51.100.1", "alice", "wrong")
    async with sessionmaker() as session:
        keys = set(await session.scalars(select(SignInCounter.key)))
    assert "login:gone" not in keys
    assert {"login:alice", "address:198.51.100.1", "site"} <= keys


@pytest.mark.parametrize(
    "web_settings",
    [WebSettings(trusted_proxy_header="REMOTE_USER", trusted_proxies=("127.0.0.1",))],
)
async def test_proxy_sign_in_still_works_when_the_proxy_forwards_the_client_address(
    client: httpx.AsyncClient, people: World
) -> None:
    headers = {"REMOTE_USER": "carol", "X-Forwarded-For": "203.0.113.8"}
    response = await client.get("/templates", headers=headers)
    assert response.status_code == 200 and "carol" in response.text


@pytest.mark.parametrize(
    "web_settings",
    [WebSettings(trusted_proxy_header="REMOTE_USER", trusted_proxies=("127.0.0.1",))],
)
async def test_a_forwarded_address_does_not_make_an_outsider_a_trusted_proxy(
    app: FastAPI, people: World
) -> None:
    transport = httpx.ASGITransport(app=app, client=("198.51.100.9", 40000))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as outsider:
        headers = {"REMOTE_USER": "carol", "X-Forwarded-For": "127.0.0.1"}
        response = await outsider.get("/templates", headers=headers)
    assert response.status_code == 303
