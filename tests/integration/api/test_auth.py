from __future__ import annotations

from datetime import timedelta

import httpx
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.models.api_tokens import ApiToken
from app.models.base import utc_now
from tests.factories import make_user
from tests.integration.api.conftest import issue_token
from tests.world import World


async def test_request_without_token_is_401_with_challenge(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/v1/me")
    assert response.status_code == 401
    assert response.json()["error"] == "Unauthorized"
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


async def test_me_shows_owner_and_effective_scopes(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    headers = await issue_token(session, world.carol, ("submit",))
    body = (await client.get("/api/v1/me", headers=headers)).json()
    assert body["login"] == "carol"
    assert body["scopes"] == ["read", "submit"]
    assert body["cluster_usernames"] == {"testcluster": "carol"}


async def test_revoked_token_is_401(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    headers = await issue_token(session, world.carol)
    token = (await session.scalars(select(ApiToken))).one()
    token.revoked_at = utc_now()
    await session.commit()
    assert (await client.get("/api/v1/me", headers=headers)).status_code == 401


async def test_expired_token_is_401(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    headers = await issue_token(session, world.carol)
    token = (await session.scalars(select(ApiToken))).one()
    token.expires_at = utc_now() - timedelta(seconds=1)
    await session.commit()
    response = await client.get("/api/v1/me", headers=headers)
    assert response.status_code == 401
    assert response.json()["detail"] == "The token is invalid, expired or revoked."


async def test_use_records_time_and_address(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    headers = await issue_token(session, world.carol)
    await client.get("/api/v1/me", headers=headers)
    token = (await session.scalars(select(ApiToken))).one()
    await session.refresh(token)
    assert token.last_used_at is not None
    assert token.last_used_ip == "127.0.0.1"


async def test_use_is_written_at_most_once_a_minute(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    headers = await issue_token(session, world.carol)
    token = (await session.scalars(select(ApiToken))).one()
    recent = utc_now() - timedelta(seconds=20)
    token.last_used_at, token.last_used_ip = recent, "10.9.9.9"
    await session.commit()
    assert (await client.get("/api/v1/me", headers=headers)).status_code == 200
    await session.refresh(token)
    assert (token.last_used_at, token.last_used_ip) == (recent, "10.9.9.9")
    token.last_used_at = utc_now() - timedelta(minutes=2)
    await session.commit()
    assert (await client.get("/api/v1/me", headers=headers)).status_code == 200
    await session.refresh(token)
    assert token.last_used_at > recent and token.last_used_ip == "127.0.0.1"


async def test_admin_without_admin_scope_is_not_treated_as_admin(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    admin = await make_user(session, "root-ops", is_site_admin=True)
    read_only = await issue_token(session, admin, ("read",))
    with_admin = await issue_token(session, admin, ("admin",))
    assert (await client.get("/api/v1/me", headers=read_only)).json()["is_site_admin"] is False
    assert (await client.get("/api/v1/me", headers=with_admin)).json()["is_site_admin"] is True
    projects = await client.get("/api/v1/projects", headers=read_only)
    assert projects.json() == []
