"""The submit form generated from a template's parameter schema, with a live preview."""

from __future__ import annotations

import uuid
from typing import Any

from fastapi import Request
from fastapi.responses import Response
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.datastructures import FormData

from app.deps import SessionDep
from app.errors import ValidationFailed
from app.i18n import _
from app.job_templates import service as templates
from app.job_templates.schema import TemplateSchema, load_schema
from app.models import JobTemplate, Project, TemplateVersion
from app.params import PathId
from app.scheduler.messages import translate
from app.submissions.service import TemplateSubmission, build_request
from app.templating import is_htmx
from app.users.actor import Actor
from app.web.auth import CurrentUser, WebContext, WebContextDep, csrf_protected_router
from app.web.choices import actor_projects, context_for
from app.web.render_pool import render_preview
from app.web.submission import submit_job
from app.web.template_forms import submitted_values
from app.web.views import page, redirect

router = csrf_protected_router()


def _no_project() -> str:
    return _("You are not in any project yet, so there is no account to charge. Ask a manager.")


def _initial_values(
    version: TemplateVersion, schema: TemplateSchema, account: str
) -> dict[str, Any]:
    defaults = version.defaults or {}
    values: dict[str, Any] = {"job_name": defaults.get("job_name", "job")}
    for parameter in schema.parameters:
        value = defaults.get(parameter.name, parameter.default)
        values[parameter.name] = "" if value is None else value
    values[schema.account_parameter().name] = account
    return values


def _chosen_project(
    projects: list[Project], schema: TemplateSchema, values: dict[str, Any]
) -> Project | None:
    account = values.get(schema.account_parameter().name)
    return next((p for p in projects if p.slurm_account == account), None)


async def _form_page(
    request: Request,
    session: AsyncSession,
    web: WebContext,
    actor: Actor,
    loaded: tuple[JobTemplate, TemplateVersion],
    values: dict[str, Any] | None = None,
    errors: dict[str, str] | None = None,
    status_code: int = 200,
) -> Response:
    template, version = loaded
    schema = load_schema(version.parameter_schema)
    projects = await actor_projects(session, actor)
    if values is None:
        values = _initial_values(version, schema, projects[0].slurm_account if projects else "")
    project = _chosen_project(projects, schema, values) or (projects[0] if projects else None)
    context: dict[str, Any] = {
        "template": template,
        "version": version,
        "schema": schema,
        "values": values,
        "errors": errors or {},
        "no_project": _no_project() if not projects else None,
        "idempotency_key": str(uuid.uuid4()),
        "preview": None,
        "choices": None,
    }
    if project is not None:
        choices = await context_for(request, session, actor, project)
        context["choices"] = choices
        context["accounts"] = [
            p.slurm_account for p in projects if p.slurm_account in choices.accounts
        ]
        if not errors:
            context["preview"] = await render_preview(version, values, project, choices)
    block = "submit_form" if is_htmx(request) else None
    return page(request, web, "submit/form.html", context, block=block, status_code=status_code)


@router.get("/templates/{template_id}/submit", name="template_submit")
async def submit_page(
    request: Request,
    session: SessionDep,
    web: WebContextDep,
    actor: CurrentUser,
    template_id: PathId,
) -> Response:
    loaded = await templates.current_version(session, actor, template_id)
    return await _form_page(request, session, web, actor, loaded)


def _pinned_number(form: FormData) -> int | None:
    raw = form.get("template_version")
    return int(raw) if isinstance(raw, str) and raw.isdigit() and len(raw) <= 9 else None


@router.post("/templates/{template_id}/submit")
async def submit(
    request: Request,
    session: SessionDep,
    web: WebContextDep,
    actor: CurrentUser,
    template_id: PathId,
) -> Response:
    form = await request.form()
    # The version the page previewed, not whatever is current by the time of the POST.
    loaded = await templates.pinned_version(session, actor, template_id, _pinned_number(form))
    schema = load_schema(loaded[1].parameter_schema)
    values = submitted_values(form, schema)
    try:
        job_id = await _render_and_submit(
            request,
            session,
            actor,
            loaded[1],
            schema,
            values,
            str(form.get("idempotency_key", "")) or None,
        )
    except ValidationFailed as error:
        fields = _form_fields(schema, error)
        return await _form_page(request, session, web, actor, loaded, values, fields, 422)
    return redirect(request, f"/jobs/{job_id}")


def _form_fields(schema: TemplateSchema, error: ValidationFailed) -> dict[str, str]:
    """The error's fields named as the form names them: a refusal of the job's ``stdout``
    belongs next to the parameter that sets it, anything else at the top of the form. The
    cluster's refusals come in English and are shown in the reader's language."""
    shown = {p.name for p in (*schema.parameters, schema.account_parameter())} | {"job_name"}
    fields: dict[str, str] = {}
    for name, english in (error.fields or {"form": error.detail}).items():
        message = translate(english, _)
        owner = next((p.name for p in schema.parameters if p.maps_to == name), None)
        target = name if name in shown else owner or "form"
        fields[target] = f"{fields[target]} {message}" if target in fields else message
    return fields


async def _render_and_submit(
    request: Request,
    session: AsyncSession,
    actor: Actor,
    version: TemplateVersion,
    schema: TemplateSchema,
    values: dict[str, Any],
    idempotency_key: str | None,
) -> int:
    # The form chooses the project by its account.
    project = _chosen_project(await actor_projects(session, actor), schema, values)
    if project is None:
        raise ValidationFailed(
            fields={schema.account_parameter().name: _("Choose one of your accounts.")}
        )
    submission = TemplateSubmission(version.template_id, values, version.version, project.id)
    job = await build_request(
        session, actor, submission, lambda p: context_for(request, session, actor, p)
    )
    return await submit_job(request, session, actor, job, idempotency_key)


@router.post("/templates/{template_id}/submit/preview", name="template_submit_preview")
async def submit_preview(
    request: Request,
    session: SessionDep,
    web: WebContextDep,
    actor: CurrentUser,
    template_id: PathId,
) -> Response:
    form = await request.form()
    number = _pinned_number(form)
    template, version = await templates.pinned_version(session, actor, template_id, number)
    schema = load_schema(version.parameter_schema)
    values = submitted_values(form, schema)
    projects = await actor_projects(session, actor)
    project = _chosen_project(projects, schema, values)
    preview = None
    if project is not None:
        preview = await render_preview(
            version, values, project, await context_for(request, session, actor, project)
        )
    return page(
        request,
        web,
        "submit/form.html",
        {"preview": preview, "template": template},
        block="preview",
    )
