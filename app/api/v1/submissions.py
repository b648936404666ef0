"""Turning an API submit body into the JobRequest the jobs service takes.

Rendering is the templates package's job and authorization the projects package's; this
module only picks the version and the project and applies the raw-script policy.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.api.v1.schemas import SubmitIn
from app.errors import Forbidden, NotFound, ValidationFailed
from app.job_templates import service as templates
from app.job_templates.context import SubmitContext
from app.job_templates.render import render
from app.job_templates.schema import load_schema
from app.jobs.requests import JobRequest
from app.jobs.scripts import ScriptJob, overrides_from_options, read_script
from app.models import JobTemplate, Project, TemplateVersion
from app.projects import service as projects
from app.users.actor import Actor

ContextFor = Callable[[Project], Awaitable[SubmitContext]]


def may_submit_raw_script(actor: Actor, project: Project) -> bool:
    """Site policy for scripts that come from no template: any member of the project."""
    return actor.is_site_admin or actor.is_member_of(project.id)


async def _project(
    session: AsyncSession, actor: Actor, project_id: int | None, template: JobTemplate | None
) -> Project:
    chosen = project_id or (template.project_id if template else None)
    if chosen is None:
        views = await projects.list_for_actor(session, actor)
        if len(views) != 1:
            raise ValidationFailed(fields={"project_id": "Choose the project to charge."})
        chosen = views[0].project.id
    return (await projects.get(session, actor, chosen)).project


async def _version(
    session: AsyncSession, actor: Actor, template_id: int, number: int | None
) -> tuple[JobTemplate, TemplateVersion]:
    if number is None:
        return await templates.current_version(session, actor, template_id)
    template = await templates.get(session, actor, template_id)
    for version in await templates.versions(session, actor, template_id):
        if version.version == number:
            return template, version
    raise NotFound("No such template version.")


def _with_account(version: TemplateVersion, body: SubmitIn, project: Project) -> dict[str, Any]:
    # The project already names the account to charge; scripts need not repeat it.
    account = load_schema(version.parameter_schema).account_parameter().name
    return {account: project.slurm_account, **body.parameters}


def _script_request(body: SubmitIn, project: Project, home: str) -> JobRequest:
    """A raw script read as sbatch reads it; the body's fields override its #SBATCH lines."""
    assert body.script is not None
    options: list[tuple[str, str | None]] = [
        (option, str(value))
        for option, value in (
            ("job-name", body.name),
            ("partition", body.partition),
            ("time", body.time_limit_minutes),
            ("cpus-per-task", body.cpus_per_task),
            ("mem", body.memory_mb),
            ("array", body.array),
        )
        if value is not None
    ]
    overrides = overrides_from_options(options)
    job = ScriptJob(project.id, body.script, tuple(body.args), overrides, body.script_name)
    return read_script(job, project.slurm_account, home).request


async def build_request(
    session: AsyncSession, actor: Actor, body: SubmitIn, context_for: ContextFor
) -> JobRequest:
    """The JobRequest for ``body``; ValidationFailed/NotFound/Forbidden when it cannot be.

    ``context_for`` gives the submitter's home, roots and choices on the project's cluster,
    as the submit page sees them, so paths like ``~/out.txt`` mean the same in both.
    """
    if (body.template_id is None) == (body.script is None):
        detail = "Give either template_id (with parameters) or script, not both."
        raise ValidationFailed(detail, {"template_id": detail})
    if body.template_id is not None:
        if body.args:
            detail = "args go with a script; a template takes parameters."
            raise ValidationFailed(detail, {"args": detail})
        template, version = await _version(session, actor, body.template_id, body.template_version)
        project = await _project(session, actor, body.project_id, template)
        context = await context_for(project)
        return render(version, _with_account(version, body, project), project, context)
    project = await _project(session, actor, body.project_id, None)
    if not may_submit_raw_script(actor, project):
        raise Forbidden("Only a template can be submitted to this project.")
    home = (await context_for(project)).home
    if home is None:
        raise ValidationFailed(f"No home directory is known on {project.cluster}.")
    return _script_request(body, project, home)
