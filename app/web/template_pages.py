"""Job template pages: list by scope, view with versions, create, edit with live preview."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import Response

from app.deps import SessionDep, SubmitChoicesDep
from app.errors import ValidationFailed
from app.i18n import _
from app.job_templates import service as templates
from app.job_templates.context import SubmitContext
from app.job_templates.schema import PARAMETER_TYPES, RESOURCES, load_schema, schema_problems
from app.models.job_templates import JobTemplate, TemplateVersion
from app.models.projects import Project
from app.params import PathId
from app.projects import service as projects
from app.submissions.choices import SubmitChoices, actor_projects
from app.templating import is_htmx
from app.users.actor import Actor
from app.web.auth import (
    CurrentUser,
    WebContext,
    WebContextDep,
    csrf_protected_router,
    web_origin,
)
from app.web.preview import Preview
from app.web.render_pool import render_preview
from app.web.template_forms import (
    EditorState,
    apply_row_action,
    parse_editor,
    rows_from_schema,
)
from app.web.views import page, redirect

router = csrf_protected_router()
NEW_SCRIPT = '#!/bin/bash\necho "Hello "{{ who }}\n'


def _scope_tabs() -> tuple[tuple[str, str], ...]:
    return (("mine", _("My templates")), ("projects", _("My projects'")), ("site", _("Site")))


def _type_labels() -> dict[str, str]:
    """What each parameter type is called on the pages (the value sent stays the type)."""
    return {
        "text": _("text"),
        "words": _("words"),
        "integer": _("integer"),
        "number": _("number"),
        "choice": _("choice"),
        "boolean": _("boolean"),
        "duration": _("duration"),
        "memory": _("memory"),
        "path": _("path"),
        "partition": _("partition"),
        "account": _("account"),
        "gpu": _("gpu"),
    }


def _resource_labels() -> dict[str, str]:
    """What each resource a parameter may set is called on the pages."""
    return {
        "partition": _("partition"),
        "time_limit": _("time_limit"),
        "cpus_per_task": _("cpus_per_task"),
        "ntasks": _("ntasks"),
        "nodes": _("nodes"),
        "memory": _("memory"),
        "gpus": _("gpus"),
        "gpu_type": _("gpu_type"),
        "array": _("array"),
        "work_dir": _("work_dir"),
        "stdout": _("stdout"),
        "stderr": _("stderr"),
    }


@router.get("/templates", name="templates")
async def list_page(
    request: Request,
    session: SessionDep,
    web: WebContextDep,
    actor: CurrentUser,
    scope: str = "site",
) -> Response:
    chosen: templates.ListScope = scope if scope in templates.LIST_SCOPES else "site"
    items = await templates.list_templates(session, actor, chosen)
    context = {"items": items, "scope": chosen, "tabs": _scope_tabs()}
    block = "template_list" if is_htmx(request) else None
    return page(request, web, "templates/list.html", context, block=block)


@router.get("/templates/new", name="template_new")
async def new_page(
    request: Request,
    choices: SubmitChoicesDep,
    session: SessionDep,
    web: WebContextDep,
    actor: CurrentUser,
) -> Response:
    state = EditorState(
        name="",
        script=NEW_SCRIPT,
        rows=[
            {
                "name": "who",
                "label": _("Who to greet"),
                "type": "text",
                "default": "world",
                "required": "on",
            }
        ],
    )
    return await _editor(request, choices, session, web, actor, state, template=None)


@router.post("/templates/new")
async def create(
    request: Request,
    choices: SubmitChoicesDep,
    session: SessionDep,
    web: WebContextDep,
    actor: CurrentUser,
) -> Response:
    form = await request.form()
    state = parse_editor(form)
    if apply_row_action(state, str(form.get("action", "save"))):
        return await _editor(request, choices, session, web, actor, state, template=None)
    try:
        template = await templates.create(session, actor, state.draft(), origin=web_origin(request))
    except ValidationFailed as error:
        return await _editor(request, choices, session, web, actor, state, None, error.fields, 422)
    return redirect(request, f"/templates/{template.id}")


@router.get("/templates/{template_id:int}", name="template_view")
async def view_page(
    request: Request,
    session: SessionDep,
    web: WebContextDep,
    actor: CurrentUser,
    template_id: PathId,
    version: int | None = None,
) -> Response:
    template = await templates.get(session, actor, template_id)
    versions = await templates.versions(session, actor, template_id)
    shown = next((v for v in versions if v.id == version), template.current_version)
    context = {
        "template": template,
        "versions": versions,
        "shown": shown,
        "schema": load_schema(shown.parameter_schema if shown else None),
        "can_edit": templates.can_edit(actor, template),
        "notes": {v.id: templates.shown_note(v.change_note) for v in versions if v.change_note},
        "type_labels": _type_labels(),
        "resource_labels": _resource_labels(),
    }
    return page(request, web, "templates/view.html", context)


@router.get("/templates/{template_id:int}/edit", name="template_edit")
async def edit_page(
    request: Request,
    choices: SubmitChoicesDep,
    session: SessionDep,
    web: WebContextDep,
    actor: CurrentUser,
    template_id: PathId,
) -> Response:
    template = await templates.get_for_edit(session, actor, template_id)
    version = template.current_version
    state = EditorState(
        name=template.name,
        description=template.description,
        scope=template.scope,
        project_id=template.project_id,
        script=version.script if version else NEW_SCRIPT,
        job_name=str((version.defaults if version else {}).get("job_name", "job")),
        rows=rows_from_schema(load_schema(version.parameter_schema if version else None)),
    )
    return await _editor(request, choices, session, web, actor, state, template)


@router.post("/templates/{template_id:int}/edit")
async def edit(
    request: Request,
    choices: SubmitChoicesDep,
    session: SessionDep,
    web: WebContextDep,
    actor: CurrentUser,
    template_id: PathId,
) -> Response:
    template = await templates.get_for_edit(session, actor, template_id)
    form = await request.form()
    state = parse_editor(form)
    if "scope" not in form:
        state.scope, state.project_id = template.scope, template.project_id
    if apply_row_action(state, str(form.get("action", "save"))):
        return await _editor(request, choices, session, web, actor, state, template)
    try:
        await templates.update(
            session, actor, template_id, state.draft(), origin=web_origin(request)
        )
    except ValidationFailed as error:
        return await _editor(
            request, choices, session, web, actor, state, template, error.fields, 422
        )
    return redirect(request, f"/templates/{template_id}")


@router.post("/templates/preview", name="template_preview")
async def editor_preview(
    request: Request,
    choices: SubmitChoicesDep,
    session: SessionDep,
    web: WebContextDep,
    actor: CurrentUser,
) -> Response:
    state = parse_editor(await request.form())
    preview = await _editor_preview(request, choices, session, actor, state)
    return page(request, web, "templates/edit.html", {"preview": preview}, block="preview")


@router.post("/templates/{template_id:int}/clone", name="template_clone")
async def clone(
    request: Request, session: SessionDep, actor: CurrentUser, template_id: PathId
) -> Response:
    copy = await templates.clone(session, actor, template_id, origin=web_origin(request))
    return redirect(request, f"/templates/{copy.id}/edit")


@router.post("/templates/{template_id:int}/archive", name="template_archive")
async def archive(
    request: Request, session: SessionDep, actor: CurrentUser, template_id: PathId
) -> Response:
    await templates.archive(session, actor, template_id, origin=web_origin(request))
    return redirect(request, "/templates?scope=mine")


async def _preview_target(
    choices: SubmitChoices, session: SessionDep, actor: Actor
) -> tuple[Project, SubmitContext]:
    projects = await actor_projects(session, actor)
    if projects:
        return projects[0], await choices.context_for(session, actor, projects[0])
    project = choices.example_project()
    return project, SubmitContext(cluster=project.cluster, accounts=(project.slurm_account,))


async def _editor_preview(
    request: Request, choices: SubmitChoices, session: SessionDep, actor: Actor, state: EditorState
) -> Preview:
    problems = schema_problems(state.schema())
    if problems:
        return Preview(errors={"parameters": " ".join(problems)})
    version = TemplateVersion(
        script=state.script, parameter_schema=state.schema(), defaults={"job_name": state.job_name}
    )
    project, context = await _preview_target(choices, session, actor)
    account = load_schema(state.schema()).account_parameter().name
    return await render_preview(version, {account: project.slurm_account}, project, context)


async def _editor(
    request: Request,
    choices: SubmitChoices,
    session: SessionDep,
    web: WebContext,
    actor: Actor,
    state: EditorState,
    template: JobTemplate | None,
    errors: dict[str, str] | None = None,
    status_code: int = 200,
) -> Response:
    managed = [p for p in await actor_projects(session, actor) if actor.is_manager_of(p.id)]
    own = template.project_id if template is not None else None
    if own is not None and own not in {p.id for p in managed}:
        # The template's own project stays a choice, so saving never moves it by omission.
        managed.append((await projects.get(session, actor, own)).project)
    context: dict[str, Any] = {
        "state": state,
        "template": template,
        "errors": errors or {},
        "managed_projects": managed,
        "parameter_types": PARAMETER_TYPES,
        "resources": RESOURCES,
        "type_labels": _type_labels(),
        "resource_labels": _resource_labels(),
        "preview": await _editor_preview(request, choices, session, actor, state),
    }
    block = "editor" if is_htmx(request) else None
    return page(request, web, "templates/edit.html", context, block=block, status_code=status_code)
