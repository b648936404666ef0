from __future__ import annotations

import re

import httpx
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models.api_tokens import ApiToken
from app.tokens import service as tokens
from app.users.actor import Actor
from tests.integration.web.conftest import sign_in
from tests.world import World

SECRET = re.compile(r'id="new-token-secret"[^>]*value="(hpc_[^"]+)"')


async def _create(
    client: httpx.AsyncClient, csrf: str, scopes: tuple[str, ...] = ("read",), **extra: str
) -> httpx.Response:
    data: dict[str, str | list[str]] = {
        "csrf_token": csrf,
        "name": "laptop",
        "scopes": list(scopes),
        "expires_in_days": "30",
        **extra,
    }
    return await client.post("/settings/tokens", data=data)


async def _stored(sessionmaker: async_sessionmaker[AsyncSession]) -> list[ApiToken]:
    async with sessionmaker() as session:
        return list((await session.scalars(select(ApiToken))).all())


async def test_page_needs_sign_in(client: httpx.AsyncClient, people: World) -> None:
    response = await client.get("/settings/tokens")
    assert response.status_code == 303
    assert response.headers["location"].startswith("/signin")


async def test_created_secret_is_shown_once_and_never_again(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    csrf = await sign_in(client, "alice")
    created = await _create(client, csrf, ("read", "submit"))
    assert created.status_code == 201
    assert created.headers["cache-control"] == "no-store"
    match = SECRET.search(created.text)
    assert match, "the new token is not on the page"
    secret = match.group(1)
    (stored,) = await _stored(sessionmaker)
    assert stored.scopes == ["read", "submit"]
    assert secret.startswith(stored.token_prefix)
    listing = await client.get("/settings/tokens")
    assert listing.status_code == 200
    assert secret not in listing.text
    assert stored.token_prefix in listing.text
    assert "laptop" in listing.text


async def test_created_token_works_on_the_api(client: httpx.AsyncClient, people: World) -> None:
    csrf = await sign_in(client, "alice")
    match = SECRET.search((await _create(client, csrf)).text)
    assert match
    me = await client.get("/api/v1/me", headers={"Authorization": f"Bearer {match.group(1)}"})
    assert me.status_code == 200
    assert me.json()["login"] == "alice"


async def test_member_is_not_offered_and_cannot_create_admin_scope(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    csrf = await sign_in(client, "carol")
    form = await client.get("/settings/tokens")
    assert 'value="admin"' not in form.text
    response = await _create(client, csrf, ("admin",))
    assert response.status_code == 422
    assert "Only site administrators" in response.text
    assert await _stored(sessionmaker) == []


async def test_site_admin_may_create_admin_scope(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    csrf = await sign_in(client, "admin")
    assert 'value="admin"' in (await client.get("/settings/tokens")).text
    assert (await _create(client, csrf, ("admin",))).status_code == 201
    assert [t.scopes for t in await _stored(sessionmaker)] == [["admin"]]


async def test_lifetime_over_the_maximum_is_refused(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    csrf = await sign_in(client, "alice")
    for days in ("0", "9999", "ninety"):
        response = await _create(client, csrf, expires_in_days=days)
        assert response.status_code == 422, days
        assert 'aria-invalid="true" aria-describedby="expires_in_days-error"' in response.text
    assert await _stored(sessionmaker) == []


async def test_create_without_csrf_is_refused(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await sign_in(client, "alice")
    response = await _create(client, "forged")
    assert response.status_code == 403
    assert await _stored(sessionmaker) == []


async def _token_of(
    sessionmaker: async_sessionmaker[AsyncSession], people: World, login: str
) -> int:
    user = getattr(people, login)
    async with sessionmaker() as session:
        actor = Actor(user_id=user.id, login=user.login, is_site_admin=False)
        created = await tokens.create_token(
            session, actor, name=f"{login}-ci", scopes=["read"], lifetime_days=10
        )
        await session.commit()
        return created.token.id


async def test_revoke_asks_first_then_revokes(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    token_id = await _token_of(sessionmaker, people, "alice")
    csrf = await sign_in(client, "alice")
    confirm = await client.get(f"/settings/tokens/{token_id}/revoke")
    assert confirm.status_code == 200
    assert "Yes, revoke it" in confirm.text
    done = await client.post(f"/settings/tokens/{token_id}/revoke", data={"csrf_token": csrf})
    assert done.status_code == 303
    (stored,) = await _stored(sessionmaker)
    assert stored.revoked_at is not None
    assert "revoked" in (await client.get("/settings/tokens")).text


async def test_alice_cannot_revoke_bobs_token(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    token_id = await _token_of(sessionmaker, people, "bob")
    csrf = await sign_in(client, "alice")
    assert (await client.get(f"/settings/tokens/{token_id}/revoke")).status_code == 404
    response = await client.post(f"/settings/tokens/{token_id}/revoke", data={"csrf_token": csrf})
    assert response.status_code == 404
    (stored,) = await _stored(sessionmaker)
    assert stored.revoked_at is None


async def test_revoke_without_csrf_is_refused(
    client: httpx.AsyncClient, people: World, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    token_id = await _token_of(sessionmaker, people, "alice")
    await sign_in(client, "alice")
    response = await client.post(f"/settings/tokens/{token_id}/revoke", data={})
    assert response.status_code == 403
    (stored,) = await _stored(sessionmaker)
    assert stored.revoked_at is None
