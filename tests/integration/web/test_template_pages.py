import httpx
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models.job_templates import JobTemplate, TemplateVersion
from tests.integration.web.conftest import sign_in
from tests.integration.web.helpers import SCRIPT, make_template
from tests.world import World

Maker = async_sessionmaker[AsyncSession]


def editor_form(csrf: str, **changes: str) -> dict[str, str]:
    form = {
        "csrf_token": csrf,
        "name": "Mine",
        "description": "",
        "scope": "personal",
        "job_name": "mine",
        "script": SCRIPT,
        "action": "save",
        "params-0-name": "message",
        "params-0-label": "Message",
        "params-0-type": "text",
        "params-0-default": "hi",
        "params-0-required": "on",
    }
    form.update(changes)
    return form


async def test_list_shows_each_scope_in_its_tab(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker
) -> None:
    await make_template(sessionmaker, people.admin, "Site one", scope="site")
    await make_template(sessionmaker, people.alice, "Alice own")
    await make_template(sessionmaker, people.bob, "Bob own")
    await make_template(sessionmaker, people.bob, "Chem shared", "project", people.chemistry.id)
    await sign_in(client, "alice")
    site = await client.get("/templates?scope=site")
    mine = await client.get("/templates?scope=mine")
    projects = await client.get("/templates?scope=projects")
    assert "Site one" in site.text and "Alice own" not in site.text
    assert "Alice own" in mine.text and "Bob own" not in mine.text
    assert "Chem shared" not in projects.text


async def test_tab_switch_over_htmx_returns_only_the_list(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker
) -> None:
    await make_template(sessionmaker, people.alice, "Alice own")
    await sign_in(client, "alice")
    response = await client.get("/templates?scope=mine", headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert response.text.lstrip().startswith('<section id="template-list"')
    assert "<html" not in response.text and "Alice own" in response.text


async def test_view_page_shows_script_parameters_and_versions(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker
) -> None:
    template = await make_template(sessionmaker, people.alice, "Alice own")
    await sign_in(client, "alice")
    response = await client.get(f"/templates/{template.id}")
    assert response.status_code == 200
    assert "echo {{ message }}" in response.text
    assert "Version 1" in response.text and "Time limit" in response.text


async def test_alice_cannot_see_or_edit_bobs_personal_template(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker
) -> None:
    template = await make_template(sessionmaker, people.bob, "Bob own")
    csrf = await sign_in(client, "alice")
    assert (await client.get(f"/templates/{template.id}")).status_code == 404
    assert (await client.get(f"/templates/{template.id}/edit")).status_code == 404
    response = await client.post(f"/templates/{template.id}/edit", data=editor_form(csrf))
    assert response.status_code == 404


async def test_alice_can_use_but_not_edit_a_site_template(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker
) -> None:
    template = await make_template(sessionmaker, people.admin, "Site one", scope="site")
    csrf = await sign_in(client, "alice")
    assert (await client.get(f"/templates/{template.id}/submit")).status_code == 200
    assert (await client.get(f"/templates/{template.id}/edit")).status_code == 403
    post = await client.post(f"/templates/{template.id}/edit", data=editor_form(csrf))
    archive = await client.post(f"/templates/{template.id}/archive", data={"csrf_token": csrf})
    assert post.status_code == 403 and archive.status_code == 403


async def test_project_member_uses_but_cannot_edit_and_manager_can(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker
) -> None:
    template = await make_template(sessionmaker, people.alice, "Phys", "project", people.physics.id)
    csrf = await sign_in(client, "carol")
    assert (await client.get(f"/templates/{template.id}/submit")).status_code == 200
    refused = await client.post(f"/templates/{template.id}/edit", data=editor_form(csrf))
    assert refused.status_code == 403
    csrf = await sign_in(client, "alice")
    form = editor_form(csrf, name="Phys v2", scope="project", project_id=str(people.physics.id))
    saved = await client.post(f"/templates/{template.id}/edit", data=form)
    assert saved.status_code == 303
    async with sessionmaker() as session:
        stored = await session.get(JobTemplate, template.id)
        versions = (
            (
                await session.execute(
                    select(TemplateVersion.version).where(
                        TemplateVersion.template_id == template.id
                    )
                )
            )
            .scalars()
            .all()
        )
    assert stored is not None and stored.name == "Phys v2"
    assert sorted(versions) == [1, 2]


async def test_post_without_csrf_token_is_refused(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker
) -> None:
    template = await make_template(sessionmaker, people.alice, "Alice own")
    await sign_in(client, "alice")
    response = await client.post(f"/templates/{template.id}/clone")
    forged = await client.post(f"/templates/{template.id}/clone", data={"csrf_token": "guess"})
    assert response.status_code == 403 and forged.status_code == 403


async def test_create_through_the_form_then_view(client: httpx.AsyncClient, people: World) -> None:
    csrf = await sign_in(client, "alice")
    response = await client.post("/templates/new", data=editor_form(csrf))
    assert response.status_code == 303
    page = await client.get(response.headers["location"])
    assert "Mine" in page.text and "Personal template" in page.text


async def test_invalid_template_is_shown_again_with_errors(
    client: httpx.AsyncClient, people: World
) -> None:
    csrf = await sign_in(client, "alice")
    form = editor_form(csrf, name="", script="echo no shebang", **{"params-0-name": "Bad Name"})
    response = await client.post("/templates/new", data=form)
    assert response.status_code == 422
    assert "Give the template a name" in response.text
    assert "interpreter line" in response.text
    assert 'value="Bad Name"' in response.text


async def test_add_and_remove_parameter_rows_without_javascript(
    client: httpx.AsyncClient, people: World
) -> None:
    csrf = await sign_in(client, "alice")
    added = await client.post("/templates/new", data=editor_form(csrf, action="add"))
    assert added.status_code == 200 and 'name="params-1-name"' in added.text
    removed = await client.post("/templates/new", data=editor_form(csrf, action="remove-0"))
    assert 'name="params-0-name"' not in removed.text


async def test_row_action_over_htmx_returns_the_editor_fragment(
    client: httpx.AsyncClient, people: World
) -> None:
    csrf = await sign_in(client, "alice")
    response = await client.post(
        "/templates/new", data=editor_form(csrf, action="add"), headers={"HX-Request": "true"}
    )
    assert response.text.lstrip().startswith('<div id="editor"')


async def test_editor_preview_shows_command_and_quoted_script(
    client: httpx.AsyncClient, people: World
) -> None:
    csrf = await sign_in(client, "alice")
    form = editor_form(csrf, **{"params-0-default": "$(reboot)"})
    response = await client.post("/templates/preview", data=form, headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert response.text.lstrip().startswith('<section id="preview"')
    assert "sbatch --parsable --job-name=mine --account=physics" in response.text
    assert "env &#39;PORTAL_PARAM_message=$(reboot)&#39; sbatch" in response.text
    assert "echo &#34;${PORTAL_PARAM_message}&#34;" in response.text


async def test_clone_makes_a_personal_copy_to_edit(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker
) -> None:
    template = await make_template(sessionmaker, people.admin, "Site one", scope="site")
    csrf = await sign_in(client, "alice")
    response = await client.post(f"/templates/{template.id}/clone", data={"csrf_token": csrf})
    assert response.status_code == 303
    edit = await client.get(response.headers["location"])
    assert edit.status_code == 200 and "Site one (copy)" in edit.text


async def test_archived_template_leaves_the_list(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker
) -> None:
    template = await make_template(sessionmaker, people.alice, "Alice own")
    csrf = await sign_in(client, "alice")
    response = await client.post(f"/templates/{template.id}/archive", data={"csrf_token": csrf})
    assert response.status_code == 303
    assert "Alice own" not in (await client.get("/templates?scope=mine")).text


async def test_who_can_use_it_can_be_changed_after_creation(
    client: httpx.AsyncClient, people: World, sessionmaker: Maker
) -> None:
    template = await make_template(sessionmaker, people.alice, "Alice own")
    csrf = await sign_in(client, "alice")
    edit = await client.get(f"/templates/{template.id}/edit")
    assert '<option value="project">A project I manage</option>' in edit.text
    form = editor_form(csrf, scope="project", project_id=str(people.physics.id))
    assert (await client.post(f"/templates/{template.id}/edit", data=form)).status_code == 303
    async with sessionmaker() as session:
        stored = await session.get(JobTemplate, template.id)
    assert stored is not None and (stored.scope, stored.project_id) == (
        "project",
        people.physics.id,
    )
    carol_csrf = await sign_in(client, "carol")
    carols = await make_template(sessionmaker, people.carol, "Carol own")
    form = editor_form(carol_csrf, scope="project", project_id=str(people.physics.id))
    assert (await client.post(f"/templates/{carols.id}/edit", data=form)).status_code == 403


async def test_a_parameter_left_unused_is_not_saved_unnoticed(
    client: httpx.AsyncClient, people: World
) -> None:
    csrf = await sign_in(client, "alice")
    form = editor_form(csrf, script="#!/bin/bash\necho hello\n")
    response = await client.post("/templates/new", data=form)
    assert response.status_code == 422
    assert "Not used anywhere: message." in response.text
