import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import Forbidden, NotFound, ValidationFailed
from app.job_templates import service
from app.job_templates.service import TemplateDraft
from app.models.projects import Membership
from app.users.actor import Actor
from tests.factories import make_project, make_user

# The portability tier: these also run on SQLite (ADR 0018).
pytestmark = pytest.mark.sqlite

SCHEMA = {"parameters": [{"name": "who", "label": "Who", "type": "text", "default": "x"}]}


def draft(**changes: object) -> TemplateDraft:
    values: dict[str, object] = {
        "name": "T",
        "script": "#!/bin/bash\necho {{ who }}\n",
        "parameter_schema": SCHEMA,
    }
    values.update(changes)
    return TemplateDraft(**values)  # type: ignore[arg-type]


async def _actors(session: AsyncSession) -> dict[str, Actor]:
    users = {
        n: await make_user(session, n, is_site_admin=n == "admin")
        for n in ("alice", "carol", "bob", "admin")
    }
    physics = await make_project(session, "physics")
    session.add_all(
        [
            Membership(user_id=users["alice"].id, project_id=physics.id, role="manager"),
            Membership(user_id=users["carol"].id, project_id=physics.id, role="member"),
        ]
    )
    await session.flush()
    roles = {"alice": {physics.id: "manager"}, "carol": {physics.id: "member"}}
    return {n: Actor(u.id, n, u.is_site_admin, roles.get(n, {})) for n, u in users.items()} | {
        "physics": Actor(physics.id, "physics")
    }


async def test_update_adds_a_version_and_moves_current(session: AsyncSession) -> None:
    actors = await _actors(session)
    template = await service.create(session, actors["alice"], draft())
    second = await service.update(session, actors["alice"], template.id, draft(name="T2"))
    versions = await service.versions(session, actors["alice"], template.id)
    assert [v.version for v in versions] == [2, 1]
    assert template.current_version_id == second.id and template.name == "T2"


async def test_project_templates_follow_project_roles(session: AsyncSession) -> None:
    actors = await _actors(session)
    project_id = actors["physics"].user_id
    template = await service.create(
        session, actors["alice"], draft(scope="project", project_id=project_id)
    )
    assert await service.get(session, actors["carol"], template.id)
    with pytest.raises(Forbidden):
        await service.update(session, actors["carol"], template.id, draft())
    with pytest.raises(NotFound):
        await service.get(session, actors["bob"], template.id)
    with pytest.raises(Forbidden):
        await service.create(
            session, actors["carol"], draft(scope="project", project_id=project_id)
        )


async def test_only_site_admins_create_and_edit_site_templates(session: AsyncSession) -> None:
    actors = await _actors(session)
    with pytest.raises(Forbidden):
        await service.create(session, actors["alice"], draft(scope="site"))
    template = await service.create(session, actors["admin"], draft(scope="site"))
    assert await service.get(session, actors["bob"], template.id)
    with pytest.raises(Forbidden):
        await service.archive(session, actors["bob"], template.id)


async def test_clone_gives_the_actor_a_personal_copy(session: AsyncSession) -> None:
    actors = await _actors(session)
    site = await service.create(session, actors["admin"], draft(scope="site"))
    copy = await service.clone(session, actors["bob"], site.id)
    assert copy.scope == "personal" and copy.owner_user_id == actors["bob"].user_id
    assert [t.id for t in await service.list_templates(session, actors["bob"], "mine")] == [copy.id]


async def test_archived_templates_are_not_listed_or_usable(session: AsyncSession) -> None:
    actors = await _actors(session)
    template = await service.create(session, actors["alice"], draft())
    await service.archive(session, actors["alice"], template.id)
    assert await service.list_templates(session, actors["alice"], "mine") == []
    with pytest.raises(NotFound):
        await service.current_version(session, actors["alice"], template.id)


async def test_broken_drafts_are_explained_per_field(session: AsyncSession) -> None:
    actors = await _actors(session)
    broken = draft(
        name="",
        script="#!/bin/bash\n#SBATCH --time={{ who }}\n",
        parameter_schema={"parameters": [{"name": "a", "label": "A", "type": "choice"}]},
    )
    with pytest.raises(ValidationFailed) as error:
        await service.create(session, actors["alice"], broken)
    assert set(error.value.fields) == {"name", "script", "parameters"}
