import asyncio

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.errors import Unauthorized
from app.security import hash_password
from app.users import service, sessions
from app.users.service import SignInRequest, TooManyAttempts
from tests.factories import make_project, make_user

# The portability tier: these also run on SQLite (ADR 0018).
pytestmark = pytest.mark.sqlite


async def test_authenticate_returns_the_user_for_the_right_password(session: AsyncSession) -> None:
    user = await make_user(session, "alice", password_hash=hash_password("pw-123456"))
    found = await service.authenticate(session, SignInRequest("alice", "pw-123456", "10.0.0.1"))
    assert found.id == user.id


async def test_inactive_user_cannot_sign_in(session: AsyncSession) -> None:
    await make_user(session, "gone", password_hash=hash_password("pw"), is_active=False)
    with pytest.raises(Unauthorized):
        await service.authenticate(session, SignInRequest("gone", "pw", "10.0.0.1"))


async def test_success_neither_clears_failures_nor_counts_as_one(session: AsyncSession) -> None:
    # A guesser who also knows one right password must not be able to reset the count with it.
    await make_user(session, "alice", password_hash=hash_password("pw"))
    for _ in range(4):
        with pytest.raises(Unauthorized):
            await service.authenticate(session, SignInRequest("alice", "bad", "10.0.0.1"))
    for _ in range(3):
        assert await service.authenticate(session, SignInRequest("alice", "pw", "10.0.0.2"))
    with pytest.raises(Unauthorized):
        await service.authenticate(session, SignInRequest("alice", "bad", "10.0.0.3"))
    with pytest.raises(TooManyAttempts):
        await service.authenticate(session, SignInRequest("alice", "pw", "10.0.0.3"))


async def test_fifth_failure_blocks_even_the_right_password(session: AsyncSession) -> None:
    await make_user(session, "alice", password_hash=hash_password("pw"))
    for _ in range(5):
        with pytest.raises(Unauthorized):
            await service.authenticate(session, SignInRequest("alice", "bad", "10.0.0.1"))
    with pytest.raises(TooManyAttempts) as error:
        await service.authenticate(session, SignInRequest("alice", "pw", "10.0.0.9"))
    assert error.value.minutes == 5


async def test_actor_carries_roles_and_cluster_usernames(session: AsyncSession) -> None:
    from app.models.projects import Membership

    user = await make_user(session, "alice", cluster_username="alice")
    project = await make_project(session, "physics")
    session.add(Membership(user_id=user.id, project_id=project.id, role="manager"))
    await session.flush()
    actor = await service.actor_for(session, user)
    assert actor.is_manager_of(project.id) and not actor.is_site_admin
    assert actor.username_on("testcluster") == "alice"
    assert await service.cluster_username(session, actor, "othercluster") is None


async def test_actor_holds_only_its_own_roles_and_usernames(session: AsyncSession) -> None:
    from app.models.projects import Membership
    from app.models.users import UserClusterAccount

    alice = await make_user(session, "alice", cluster_username="alice")
    bob = await make_user(session, "bob", cluster_username="bob")
    physics = await make_project(session, "physics")
    chemistry = await make_project(session, "chemistry")
    session.add_all(
        [
            Membership(user_id=alice.id, project_id=physics.id, role="member"),
            Membership(user_id=alice.id, project_id=chemistry.id, role="manager"),
            Membership(user_id=bob.id, project_id=physics.id, role="manager"),
            UserClusterAccount(user_id=alice.id, cluster="othercluster", username="a123"),
        ]
    )
    await session.flush()
    actor = await service.actor_for(session, alice)
    assert dict(actor.project_roles) == {physics.id: "member", chemistry.id: "manager"}
    assert dict(actor.cluster_usernames) == {"testcluster": "alice", "othercluster": "a123"}
    lonely = await make_user(session, "carol")
    empty = await service.actor_for(session, lonely)
    assert not empty.project_roles and not empty.cluster_usernames


async def test_expired_or_ended_sessions_do_not_resolve(session: AsyncSession) -> None:
    user = await make_user(session, "alice")
    token = await sessions.start(session, user.id)
    resolved = await sessions.resolve(session, token)
    assert resolved is not None and resolved[1].login == "alice"
    await sessions.end(session, token)
    assert await sessions.resolve(session, token) is None
    assert await sessions.resolve(session, "made-up") is None


# Sixty Argon2 checks against SQLite's single writer and its 5 s busy timeout: beside the
# other lanes on two cores the writers queue past it, so it runs with the machine to itself.
@pytest.mark.alone
async def test_concurrent_right_and_wrong_passwords_only_sign_in_or_refuse(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    # Successes give slots back while failures take them: both touch the same counter rows.
    async with sessionmaker() as setup:
        for login in ("alice", "bob", "carol"):
            await make_user(setup, login, password_hash=hash_password("pw"))
        await setup.commit()

    async def attempt(number: int) -> str:
        login = ("alice", "bob", "carol")[number % 3]
        password = "pw" if number % 2 else "bad"
        async with sessionmaker() as own:
            try:
                await service.authenticate(
                    own,
                    SignInRequest(login, password, f"10.0.0.{number % 4}"),
                    counters=sessionmaker,
                )
            except Unauthorized:
                return "refused"
            except TooManyAttempts:
                return "throttled"
            return "signed in"

    outcomes = await asyncio.gather(*(attempt(n) for n in range(60)))
    assert set(outcomes) <= {"signed in", "refused", "throttled"}
    assert "signed in" in outcomes
