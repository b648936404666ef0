"""The submit form generated from a template's parameter schema, with a live preview."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Query, Request
from fastapi.responses import Response
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.datastructures import FormData

from app.announcements import service as announcements
from app.announcements.maintenance import Clash
from app.deps import JobServiceDep, SessionDep, SubmitChoicesDep
from app.errors import ValidationFailed
from app.i18n import _
from app.job_templates import service as templates
from app.job_templates.schema import TemplateSchema, load_schema
from app.jobs.dependencies import After
from app.jobs.service import JobService
from app.models.base import utc_now
from app.models.job_templates import JobTemplate, TemplateVersion
from app.models.projects import Project
from app.params import PathId
from app.reports.allocation import allocation_warning
from app.scheduler.messages import translate
from app.submissions.choices import SubmitChoices, actor_projects
from app.submissions.service import TemplateSubmission, build_request
from app.templating import is_htmx
from app.users.actor import Actor
from app.web.auth import CurrentUser, WebContext, WebContextDep, csrf_protected_router
from app.web.depends_on import after_context, after_from
from app.web.preview import Preview
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
    projects: list[Project], schema: TemplateSchema, values: dict[str, Any], cluster: str | None
) -> Project | None:
    """The project charged: the chosen account's on the chosen cluster (one account name,
    e.g. ``physics``, may be a project on several clusters)."""
    account = values.get(schema.account_parameter().name)
    here = [p for p in projects if cluster in (None, p.cluster)]
    return next((p for p in here if p.slurm_account == account), None)


def _starting_point(
    projects: list[Project],
    version: TemplateVersion,
    schema: TemplateSchema,
    values: dict[str, Any] | None,
    cluster: str | None,
) -> tuple[dict[str, Any], Project | None]:
    """The form's values (the template's defaults on a first visit) and the project they
    charge, on ``cluster`` when the user has a project there, else on their first one's."""
    here = [p for p in projects if p.cluster == cluster] or projects
    if values is None:
        values = _initial_values(version, schema, here[0].slurm_account if here else "")
    chosen = _chosen_project(projects, schema, values, here[0].cluster if here else None)
    return values, chosen or (here[0] if here else None)


def _cluster_of(form: FormData) -> str | None:
    raw = form.get("cluster")
    return raw if isinstance(raw, str) and raw and len(raw) <= 64 else None


async def _form_page(
    request: Request,
    choices: SubmitChoices,
    session: AsyncSession,
    web: WebContext,
    actor: Actor,
    loaded: tuple[JobTemplate, TemplateVersion],
    values: dict[str, Any] | None = None,
    errors: dict[str, str] | None = None,
    status_code: int = 200,
    cluster: str | None = None,
    after: tuple[After, ...] = (),
) -> Response:
    template, version = loaded
    schema = load_schema(version.parameter_schema)
    projects = await actor_projects(session, actor)
    values, project = _starting_point(projects, version, schema, values, cluster)
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
        "clusters": sorted({p.cluster for p in projects}),
        "cluster": project.cluster if project else None,
        **await after_context(session, actor, after),
    }
    if project is not None:
        offered = await choices.context_for(session, actor, project)
        context["choices"] = offered
        context["accounts"] = [
            p.slurm_account
            for p in projects
            if p.cluster == project.cluster and p.slurm_account in offered.accounts
        ]
        if not errors:
            context["preview"] = await render_preview(version, values, project, offered)
            context["maintenance"] = await _maintenance(session, project, context["preview"])
            context["allocation_warning"] = await _allocation_warning(
                session, project, context["preview"]
            )
    block = "submit_form" if is_htmx(request) else None
    return page(request, web, "submit/form.html", context, block=block, status_code=status_code)


@router.get("/templates/{template_id:int}/submit", name="template_submit")
async def submit_page(
    request: Request,
    choices: SubmitChoicesDep,
    session: SessionDep,
    web: WebContextDep,
    actor: CurrentUser,
    template_id: PathId,
    cluster: Annotated[str | None, Query(max_length=64)] = None,
) -> Response:
    loaded = await templates.current_version(session, actor, template_id)
    return await _form_page(request, choices, session, web, actor, loaded, cluster=cluster)


def _pinned_number(form: FormData) -> int | None:
    raw = form.get("template_version")
    return int(raw) if isinstance(raw, str) and raw.isdigit() and len(raw) <= 9 else None


@router.post("/templates/{template_id:int}/submit")
async def submit(
    request: Request,
    service: JobServiceDep,
    choices: SubmitChoicesDep,
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
    cluster = _cluster_of(form)
    try:
        job_id = await _render_and_submit(
            _Sender(request, service, choices),
            session,
            actor,
            loaded[1],
            schema,
            (values, cluster),
            str(form.get("idempotency_key", "")) or None,
            after_from(form),
        )
    except ValidationFailed as error:
        fields = _form_fields(schema, error)
        return await _form_page(
            request,
            choices,
            session,
            web,
            actor,
            loaded,
            values,
            fields,
            422,
            cluster=cluster,
            after=after_from(form),
        )
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


@dataclass(frozen=True, slots=True)
class _Sender:
    """What a submission is sent with: the form's request, the jobs service, the choices."""

    request: Request
    service: JobService
    choices: SubmitChoices


async def _render_and_submit(
    sender: _Sender,
    session: AsyncSession,
    actor: Actor,
    version: TemplateVersion,
    schema: TemplateSchema,
    chosen: tuple[dict[str, Any], str | None],
    idempotency_key: str | None,
    after: tuple[After, ...] = (),
) -> int:
    # The form chooses the project by its cluster and account.
    values, cluster = chosen
    project = _chosen_project(await actor_projects(session, actor), schema, values, cluster)
    if project is None:
        raise ValidationFailed(
            fields={schema.account_parameter().name: _("Choose one of your accounts.")}
        )
    submission = TemplateSubmission(version.template_id, values, version.version, project.id, after)
    job = await build_request(
        session, actor, submission, lambda p: sender.choices.context_for(session, actor, p)
    )
    return await submit_job(sender.service, sender.request, actor, job, idempotency_key)


@router.post("/templates/{template_id:int}/submit/preview", name="template_submit_preview")
async def submit_preview(
    request: Request,
    choices: SubmitChoicesDep,
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
    project = _chosen_project(projects, schema, values, _cluster_of(form))
    preview = None
    warning = None
    if project is not None:
        preview = await render_preview(
            version, values, project, await choices.context_for(session, actor, project)
        )
        warning = await _allocation_warning(session, project, preview)
    context = {
        "preview": preview,
        "template": template,
        "maintenance": await _maintenance(session, project, preview),
        "allocation_warning": warning,
    }
    return page(request, web, "submit/form.html", context, block="preview")


async def _maintenance(
    session: AsyncSession, project: Project | None, preview: Preview | None
) -> Clash | None:
    """The maintenance window this job would wait for, said before it is submitted."""
    if project is None or preview is None or preview.request is None:
        return None
    job = preview.request
    return await announcements.maintenance_clash(
        session, project.cluster, job.time_limit_minutes, job.partition
    )


async def _allocation_warning(
    session: AsyncSession, project: Project, preview: Preview
) -> str | None:
    """Said before submitting: the request does not fit what is left of the allocation."""
    if preview.request is None:
        return None
    return await allocation_warning(session, project, preview.request, utc_now().date())
