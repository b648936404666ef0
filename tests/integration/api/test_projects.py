from __future__ import annotations

import httpx
from sqlalchemy.ext.asyncio import AsyncSession

from tests.integration.api.conftest import issue_token
from tests.world import World


async def test_projects_list_shows_own_projects_with_role(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    headers = await issue_token(session, world.alice, ("read",))
    body = (await client.get("/api/v1/projects", headers=headers)).json()
    assert [(p["name"], p["role"]) for p in body] == [("physics", "manager")]


async def test_foreign_project_is_404(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    headers = await issue_token(session, world.carol, ("read",))
    response = await client.get(f"/api/v1/projects/{world.chemistry.id}", headers=headers)
    assert response.status_code == 404


async def test_manager_sees_members(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    headers = await issue_token(session, world.alice, ("read",))
    response = await client.get(f"/api/v1/projects/{world.physics.id}/members", headers=headers)
    assert response.status_code == 200
    assert sorted((m["login"], m["role"]) for m in response.json()) == [
        ("alice", "manager"),
        ("carol", "member"),
    ]


async def test_member_may_not_list_members(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    headers = await issue_token(session, world.carol, ("read",))
    response = await client.get(f"/api/v1/projects/{world.physics.id}/members", headers=headers)
    assert response.status_code == 403
    assert response.json()["error"] == "Forbidden"
