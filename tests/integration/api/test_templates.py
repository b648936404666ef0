from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy.ext.asyncio import AsyncSession

from tests.factories import make_template, make_user
from tests.integration.api.conftest import issue_token
from tests.world import World

SCHEMA = {"parameters": [{"name": "who", "label": "Who", "type": "text", "default": "world"}]}


def _body(name: str = "greet", script: str = "#!/bin/bash\necho hi {{ who }}\n") -> dict[str, Any]:
    return {"name": name, "script": script, "parameter_schema": SCHEMA, "change_note": "first"}


async def test_list_shows_personal_project_and_site_templates_only(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    admin = await make_user(session, "ops", is_site_admin=True)
    await make_template(session, world.carol, name="mine")
    await make_template(session, admin, name="everyone", scope="site")
    await make_template(session, world.alice, name="team", scope="project", project=world.physics)
    await make_template(session, world.bob, name="bobs")
    await make_template(session, world.bob, name="chem", scope="project", project=world.chemistry)
    await session.commit()
    headers = await issue_token(session, world.carol, ("read",))
    response = await client.get("/api/v1/templates", headers=headers)
    assert response.status_code == 200
    assert sorted(t["name"] for t in response.json()["items"]) == ["everyone", "mine", "team"]


async def test_create_then_get_shows_version_one(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    headers = await issue_token(session, world.carol)
    created = await client.post("/api/v1/templates", json=_body(), headers=headers)
    assert created.status_code == 201, created.text
    template_id = created.json()["id"]
    got = (await client.get(f"/api/v1/templates/{template_id}", headers=headers)).json()
    assert got["scope"] == "personal"
    assert got["owner_user_id"] == world.carol.id
    assert got["version"]["version"] == 1
    assert got["version"]["parameter_schema"] == SCHEMA


async def test_read_token_cannot_create(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    headers = await issue_token(session, world.carol, ("read",))
    assert (
        await client.post("/api/v1/templates", json=_body(), headers=headers)
    ).status_code == 403


async def test_invalid_script_is_422_with_fields(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    headers = await issue_token(session, world.carol)
    body = _body(script="#!/bin/bash\necho {{ who ")
    response = await client.post("/api/v1/templates", json=body, headers=headers)
    assert response.status_code == 422
    assert "script" in response.json()["fields"]


async def test_member_cannot_create_site_template(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    headers = await issue_token(session, world.carol)
    body = {**_body(), "scope": "site"}
    assert (await client.post("/api/v1/templates", json=body, headers=headers)).status_code == 403


async def test_update_makes_a_new_current_version_and_keeps_the_old(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    headers = await issue_token(session, world.carol)
    template_id = (await client.post("/api/v1/templates", json=_body(), headers=headers)).json()[
        "id"
    ]
    changed = _body(script="#!/bin/bash\necho bye {{ who }}\n")
    response = await client.put(f"/api/v1/templates/{template_id}", json=changed, headers=headers)
    assert response.status_code == 200, response.text
    assert response.json()["current_version"] == 2
    versions = (
        await client.get(f"/api/v1/templates/{template_id}/versions", headers=headers)
    ).json()
    # Newest first, as the template page lists them.
    assert [(v["version"], "bye" in v["script"]) for v in versions] == [(2, True), (1, False)]
    first = await client.get(f"/api/v1/templates/{template_id}/versions/1", headers=headers)
    assert "echo hi" in first.json()["script"]
    missing = await client.get(f"/api/v1/templates/{template_id}/versions/9", headers=headers)
    assert missing.status_code == 404


async def test_carol_cannot_update_or_see_bobs_personal_template(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    bobs = await make_template(session, world.bob, name="bobs")
    await session.commit()
    headers = await issue_token(session, world.carol)
    path = f"/api/v1/templates/{bobs.id}"
    assert (await client.get(path, headers=headers)).status_code == 404
    assert (await client.put(path, json=_body(), headers=headers)).status_code == 404
    assert (await client.post(f"{path}/clone", headers=headers)).status_code == 404


async def test_carol_cannot_update_a_site_template_but_may_clone_it(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    admin = await make_user(session, "ops", is_site_admin=True)
    site = await make_template(session, admin, name="hello-world", scope="site")
    await session.commit()
    headers = await issue_token(session, world.carol)
    refused = await client.put(f"/api/v1/templates/{site.id}", json=_body(), headers=headers)
    assert refused.status_code == 403
    clone = await client.post(f"/api/v1/templates/{site.id}/clone", headers=headers)
    assert clone.status_code == 201, clone.text
    copy = clone.json()
    assert (copy["name"], copy["scope"], copy["owner_user_id"]) == (
        "hello-world (copy)",
        "personal",
        world.carol.id,
    )
    assert copy["version"]["script"] == "#!/bin/bash\necho hello\n"


async def test_update_without_scope_keeps_who_can_use_it_and_with_scope_moves_it(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    shared = await make_template(
        session, world.alice, name="shared", scope="project", project=world.physics
    )
    await session.commit()
    headers = await issue_token(session, world.alice)
    path = f"/api/v1/templates/{shared.id}"
    kept = await client.put(path, json=_body(), headers=headers)
    assert kept.status_code == 200 and kept.json()["scope"] == "project"
    moved = await client.put(path, json={**_body(), "scope": "personal"}, headers=headers)
    assert moved.status_code == 200 and moved.json()["scope"] == "personal"
    refused = await client.put(path, json={**_body(), "scope": "site"}, headers=headers)
    assert refused.status_code == 403


async def test_a_version_that_could_not_be_rendered_is_refused(
    client: httpx.AsyncClient, session: AsyncSession, world: World
) -> None:
    headers = await issue_token(session, world.carol)
    body = _body(script="#!/bin/bash\necho $(( {{ who }} + 1 ))\n")
    response = await client.post("/api/v1/templates", json=body, headers=headers)
    assert response.status_code == 422
    assert "only numbers may go there" in response.text
