from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import NotFound, Unauthorized, ValidationFailed
from app.models.api_tokens import ApiToken
from app.models.base import utc_now
from app.models.users import User
from app.security import hash_token
from app.tokens import service
from app.tokens.scopes import ADMIN, READ, SUBMIT
from app.users.actor import Actor
from tests.factories import make_user

# The portability tier: these also run on SQLite (ADR 0018).
pytestmark = pytest.mark.sqlite


def as_actor(user: User) -> Actor:
    return Actor(user_id=user.id, login=user.login, is_site_admin=user.is_site_admin)


async def test_created_token_is_stored_only_as_its_hash(session: AsyncSession) -> None:
    alice = await make_user(session, "alice")
    created = await service.create_token(
        session, as_actor(alice), name="laptop", scopes=[READ], lifetime_days=30
    )
    stored = (await session.scalars(select(ApiToken))).one()
    assert stored.token_hash == hash_token(created.secret)
    assert created.secret not in (stored.token_hash, stored.token_prefix)
    assert created.secret.startswith(stored.token_prefix)
    assert stored.expires_at is not None


async def test_token_authenticates_as_its_owner_with_implied_read(session: AsyncSession) -> None:
    alice = await make_user(session, "alice")
    created = await service.create_token(
        session, as_actor(alice), name="ci", scopes=[SUBMIT], lifetime_days=None
    )
    identity = await service.authenticate(session, created.secret)
    assert identity.user.id == alice.id
    assert identity.scopes == frozenset({READ, SUBMIT})


async def test_member_cannot_create_admin_token(session: AsyncSession) -> None:
    alice = await make_user(session, "alice")
    with pytest.raises(ValidationFailed) as caught:
        await service.create_token(
            session, as_actor(alice), name="x", scopes=[ADMIN], lifetime_days=1
        )
    assert "scopes" in caught.value.fields


async def test_create_reports_every_bad_field(session: AsyncSession) -> None:
    alice = await make_user(session, "alice")
    with pytest.raises(ValidationFailed) as caught:
        await service.create_token(
            session, as_actor(alice), name=" ", scopes=["root"], lifetime_days=0
        )
    assert set(caught.value.fields) == {"name", "scopes", "expires_in_days"}


async def test_admin_scope_lapses_when_owner_loses_admin_role(session: AsyncSession) -> None:
    root = await make_user(session, "operator", is_site_admin=True)
    created = await service.create_token(
        session, as_actor(root), name="ops", scopes=[ADMIN], lifetime_days=None
    )
    assert ADMIN in (await service.authenticate(session, created.secret)).scopes
    root.is_site_admin = False
    await session.flush()
    assert (await service.authenticate(session, created.secret)).scopes == frozenset({READ})


@pytest.mark.parametrize("secret", ["", "hpc_", "not-a-token", "hpc_" + "x" * 43])
async def test_unknown_secret_is_unauthorized(session: AsyncSession, secret: str) -> None:
    with pytest.raises(Unauthorized):
        await service.authenticate(session, secret)


async def test_revoked_token_is_unauthorized(session: AsyncSession) -> None:
    alice = await make_user(session, "alice")
    created = await service.create_token(
        session, as_actor(alice), name="a", scopes=[READ], lifetime_days=1
    )
    await service.revoke_token(session, as_actor(alice), created.token.id)
    with pytest.raises(Unauthorized):
        await service.authenticate(session, created.secret)


async def test_expired_token_is_unauthorized(session: AsyncSession) -> None:
    alice = await make_user(session, "alice")
    created = await service.create_token(
        session, as_actor(alice), name="a", scopes=[READ], lifetime_days=1
    )
    with pytest.raises(Unauthorized):
        await service.authenticate(session, created.secret, now=utc_now() + timedelta(days=2))


async def test_token_of_deactivated_user_is_unauthorized(session: AsyncSession) -> None:
    alice = await make_user(session, "alice")
    created = await service.create_token(
        session, as_actor(alice), name="a", scopes=[READ], lifetime_days=1
    )
    alice.is_active = False
    await session.flush()
    with pytest.raises(Unauthorized):
        await service.authenticate(session, created.secret)


async def test_user_cannot_revoke_another_users_token(session: AsyncSession) -> None:
    alice = await make_user(session, "alice")
    bob = await make_user(session, "bob")
    created = await service.create_token(
        session, as_actor(alice), name="a", scopes=[READ], lifetime_days=1
    )
    with pytest.raises(NotFound):
        await service.revoke_token(session, as_actor(bob), created.token.id)
    assert created.token.revoked_at is None


async def test_last_use_is_recorded_at_most_once_a_minute(session: AsyncSession) -> None:
    alice = await make_user(session, "alice")
    created = await service.create_token(
        session, as_actor(alice), name="a", scopes=[READ], lifetime_days=1
    )
    start = utc_now()
    token_id = created.token.id
    assert await service.record_use(session, token_id, "10.0.0.1", now=start)
    assert not await service.record_use(
        session, token_id, "10.0.0.2", now=start + timedelta(seconds=30)
    )
    assert await service.record_use(
        session, token_id, "10.0.0.3", now=start + timedelta(seconds=61)
    )
    await session.refresh(created.token)
    assert created.token.last_used_ip == "10.0.0.3"


async def test_list_shows_only_own_tokens_newest_first(session: AsyncSession) -> None:
    alice = await make_user(session, "alice")
    bob = await make_user(session, "bob")
    now = utc_now()
    await service.create_token(
        session, as_actor(alice), name="old", scopes=[READ], lifetime_days=1, now=now
    )
    await service.create_token(
        session,
        as_actor(alice),
        name="new",
        scopes=[READ],
        lifetime_days=1,
        now=now + timedelta(seconds=1),
    )
    await service.create_token(session, as_actor(bob), name="bobs", scopes=[READ], lifetime_days=1)
    assert [t.name for t in await service.list_tokens(session, as_actor(alice))] == ["new", "old"]
