import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import Forbidden, NotFound
from app.models.projects import Membership
from app.projects import service
from app.users.service import actor_for
from tests.factories import make_project, make_user

# The portability tier: these also run on SQLite (ADR 0018).
pytestmark = pytest.mark.sqlite


async def _world(session: AsyncSession) -> dict[str, object]:
    alice = await make_user(session, "alice")
    carol = await make_user(session, "carol")
    bob = await make_user(session, "bob")
    admin = await make_user(session, "admin", is_site_admin=True)
    physics = await make_project(session, "physics")
    chemistry = await make_project(session, "chemistry")
    session.add_all(
        [
            Membership(user_id=alice.id, project_id=physics.id, role="manager"),
            Membership(user_id=carol.id, project_id=physics.id, role="member"),
            Membership(user_id=bob.id, project_id=chemistry.id, role="manager"),
        ]
    )
    await session.flush()
    return {
        "alice": alice,
        "carol": carol,
        "bob": bob,
        "admin": admin,
        "physics": physics,
        "chemistry": chemistry,
    }


async def test_actor_lists_only_their_projects_with_roles(session: AsyncSession) -> None:
    world = await _world(session)
    views = await service.list_for_actor(session, await actor_for(session, world["carol"]))
    assert [(v.project.name, v.role) for v in views] == [("physics", "member")]


async def test_site_admin_lists_every_project(session: AsyncSession) -> None:
    world = await _world(session)
    views = await service.list_for_actor(session, await actor_for(session, world["admin"]))
    assert [v.project.name for v in views] == ["chemistry", "physics"]


async def test_manager_sees_members_and_member_does_not(session: AsyncSession) -> None:
    world = await _world(session)
    physics_id = world["physics"].id  # type: ignore[attr-defined]
    members = await service.members(session, await actor_for(session, world["alice"]), physics_id)
    assert [(m.login, m.role) for m in members] == [("alice", "manager"), ("carol", "member")]
    with pytest.raises(Forbidden):
        await service.members(session, await actor_for(session, world["carol"]), physics_id)


async def test_other_projects_are_not_found(session: AsyncSession) -> None:
    world = await _world(session)
    with pytest.raises(NotFound):
        await service.get(
            session,
            await actor_for(session, world["bob"]),
            world["physics"].id,  # type: ignore[attr-defined]
        )
